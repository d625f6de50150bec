/**
 * The bodies that name a target and a conversation (deployments, the control plane's chat, the studio's Playground
 * chat) are checked by their contract schema alone: a bad kind, a missing field or a value of the wrong type is a 400
 * whose message names the field, and the handler never runs. Served by serveRoute on a real Fastify with the cloud's
 * and the studio's validation options.
 */
import assert from "node:assert/strict";
import Fastify, { type FastifyInstance } from "fastify";
import { deploymentsApi } from "../../../sdk/api/deployments.js";
import { inferenceChatRoute } from "../../../sdk/api/inference.js";
import { studioStreams } from "../../../sdk/api/studio.js";
import type { AnyRoute } from "../../../sdk/api/route.js";
import { contractValidation, serveRoute } from "../../../server-shared/serveRoute.js";

const TARGET_RULE = 'target.kind must be one of "adapter", "checkpoint", "base_model"';
const messages = [{ role: "user", content: "hi" }];

/** Each route with a body it accepts; the cases below spoil one field of it. */
const ROUTES: { name: string; route: AnyRoute; url: string; valid: Record<string, unknown> }[] = [
  { name: "createDeployment", route: deploymentsApi.createDeployment, url: "/v1/deployments", valid: { slug: "good-slug" } },
  { name: "updateDeployment", route: deploymentsApi.updateDeployment, url: "/v1/deployments/d1", valid: {} },
  { name: "inference chat", route: inferenceChatRoute, url: "/v1/inference/chat", valid: { messages } },
  { name: "studio chat", route: studioStreams.chat, url: "/api/inference/chat", valid: { messages } },
];

/** A target spoiled one way, and the 400's message. */
const BAD_TARGETS: { target: unknown; message: string }[] = [
  { target: "adapter", message: TARGET_RULE },
  { target: null, message: TARGET_RULE },
  { target: [], message: TARGET_RULE },
  { target: {}, message: TARGET_RULE },
  { target: { kind: "lora", jobId: "j1" }, message: TARGET_RULE },
  { target: { kind: 7 }, message: TARGET_RULE },
  { target: { kind: "adapter" }, message: "target.jobId must be a job id" },
  { target: { kind: "adapter", jobId: "" }, message: "target.jobId must be a job id" },
  { target: { kind: "adapter", jobId: 12 }, message: "target.jobId must be a job id" },
  { target: { kind: "checkpoint", jobId: "j1" }, message: "target.step must be a non-negative integer" },
  { target: { kind: "checkpoint", jobId: "j1", step: -1 }, message: "target.step must be a non-negative integer" },
  { target: { kind: "checkpoint", jobId: "j1", step: 1.5 }, message: "target.step must be a non-negative integer" },
  { target: { kind: "checkpoint", jobId: "j1", step: "10" }, message: "target.step must be a non-negative integer" },
  { target: { kind: "checkpoint", step: 10 }, message: "target.jobId must be a job id" },
  { target: { kind: "base_model" }, message: "target.name must name a base model" },
  { target: { kind: "base_model", name: "" }, message: "target.name must name a base model" },
  { target: { kind: "base_model", name: ["svc-tiny"] }, message: "target.name must name a base model" },
];

const GOOD_TARGETS = [
  { kind: "adapter", jobId: "j1" },
  { kind: "checkpoint", jobId: "j1", step: 0 },
  { kind: "base_model", name: "svc-tiny" },
];

describe("contract bodies: targets, conversations and sampling numbers checked by their schema", () => {
  let app: FastifyInstance;
  /** The bodies the handlers received: only the valid ones may arrive. */
  const received: unknown[] = [];

  before(async () => {
    app = Fastify({ logger: false, ...contractValidation });
    for (const { route } of ROUTES) {
      serveRoute(app, route, async (request) => {
        received.push(request.body);
        return {} as never;
      });
    }
    await app.ready();
  });
  after(async () => app?.close());

  const send = async (route: AnyRoute, url: string, body: unknown) => {
    const res = await app.inject({ method: route.method, url, payload: body as object });
    return { status: res.statusCode, message: (res.json() as { message?: string }).message };
  };

  it("refuses each bad target with a message naming its field, before any handler runs", async () => {
    for (const { name, route, url, valid } of ROUTES) {
      for (const { target, message } of BAD_TARGETS) {
        const res = await send(route, url, { ...valid, target });
        assert.deepEqual(res, { status: 400, message }, `${name} ${JSON.stringify(target)}`);
      }
    }
    assert.deepEqual(received, []);
  });

  it("takes each kind of target with its own fields", async () => {
    for (const { name, route, url, valid } of ROUTES) {
      for (const target of GOOD_TARGETS) {
        const res = await send(route, url, { ...valid, target });
        assert.equal(res.status, route.status ?? 200, `${name} ${JSON.stringify(target)}: ${res.message}`);
      }
    }
    assert.equal(received.length, ROUTES.length * GOOD_TARGETS.length);
    received.length = 0;
  });

  it("refuses a conversation that is not a non-empty list of { role, content }", async () => {
    const target = GOOD_TARGETS[2];
    const cases: { messages: unknown; message: string }[] = [
      { messages: undefined, message: "messages must be a non-empty array of { role, content }" },
      { messages: [], message: "messages must be a non-empty array of { role, content }" },
      { messages: "hi", message: "messages must be a non-empty array of { role, content }" },
      { messages: [{ role: "robot", content: "hi" }], message: `each message's role must be "system", "user" or "assistant"` },
      { messages: [{ content: "hi" }], message: `each message's role must be "system", "user" or "assistant"` },
      { messages: [{ role: "user" }], message: "each message's content must be a string" },
      { messages: [{ role: "user", content: null }], message: "each message's content must be a string" },
    ];
    for (const { name, route, url } of ROUTES.slice(2)) {
      for (const { messages, message } of cases) {
        const res = await send(route, url, { target, messages });
        assert.deepEqual(res, { status: 400, message }, `${name} ${JSON.stringify(messages)}`);
      }
    }
    assert.deepEqual(received, []);
  });

  it("refuses the Playground's temperature and maxTokens outside their bounds or of the wrong type", async () => {
    const body = { target: GOOD_TARGETS[2], messages };
    const cases: [Record<string, unknown>, string][] = [
      [{ temperature: -0.1 }, "temperature must be a number from 0 to 2"],
      [{ temperature: 2.5 }, "temperature must be a number from 0 to 2"],
      [{ temperature: "0.7" }, "temperature must be a number from 0 to 2"],
      [{ maxTokens: 0 }, "maxTokens must be an integer from 1 to 4096"],
      [{ maxTokens: 4097 }, "maxTokens must be an integer from 1 to 4096"],
      [{ maxTokens: 1.5 }, "maxTokens must be an integer from 1 to 4096"],
      [{ maxTokens: "12" }, "maxTokens must be an integer from 1 to 4096"],
    ];
    for (const [fields, message] of cases) {
      assert.deepEqual(await send(studioStreams.chat, "/api/inference/chat", { ...body, ...fields }), { status: 400, message }, JSON.stringify(fields));
    }
    assert.deepEqual(received, []);
    assert.equal((await send(studioStreams.chat, "/api/inference/chat", { ...body, temperature: 0, maxTokens: 4096 })).status, 200);
  });
});
