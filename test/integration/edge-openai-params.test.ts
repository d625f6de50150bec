/**
 * The Chat Completions parameter matrix of the edge (issue 13), through the real `openai` client
 * against a real cloud process and llama.cpp: every parameter is honoured with an effect asserted
 * here, or refused with a 400 naming it (README "OpenAI compatibility" lists the same matrix).
 * Then the HTTP hygiene: x-request-id, CORS, /v1/models/{id}, and the parser-level refusals
 * (malformed, headers too large, a body that never arrives) in OpenAI's envelope.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { CloudClient } from "../../sdk/client.js";
import { rawExchange } from "../support/rawHttp.js";
import { newAccount } from "../support/api.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";

const messages = [{ role: "user" as const, content: "Tell me about cats." }];
const COLORS = ["red", "green", "blue"];
const colorSchema = {
  type: "object",
  properties: { color: { enum: COLORS }, size: { type: "integer" } },
  required: ["color", "size"],
  additionalProperties: false,
};

describe("edge: OpenAI parameters and HTTP hygiene", function () {
  this.timeout(120_000);
  let cloud: TestCloud;
  let client: CloudClient;
  let openai: OpenAI;
  const slug = "params";

  before(async () => {
    cloud = await startTestCloud({ env: { SVC_EDGE_REQUEST_TIMEOUT_MS: "1000" } });
    client = (await newAccount(cloud)).client;
    await client.createDeployment({ slug, target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
    openai = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey: "unused", maxRetries: 0 });
  });
  after(async () => cloud?.dispose());

  const refused = async (body: Record<string, unknown>, param: string) => {
    const response = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages, max_tokens: 4, ...body }),
    });
    const answer = (await response.json()) as { error: { param: string | null; type: string; message: string } };
    assert.equal(response.status, 400, JSON.stringify(answer));
    assert.equal(answer.error.param, param, answer.error.message);
    assert.equal(answer.error.type, "invalid_request_error");
  };

  describe("honoured", () => {
    it("seed: unseeded samples differ, seeded ones repeat", async () => {
      const sample = (seed?: number) =>
        openai.chat.completions.create({ model: slug, messages, max_tokens: 40, temperature: 1.5, ...(seed === undefined ? {} : { seed }) });
      const unseeded = await Promise.all([0, 1, 2, 3, 4].map(() => sample()));
      assert.ok(new Set(unseeded.map((c) => c.choices[0].message.content)).size > 1, "five unseeded samples were identical");
      assert.equal((await sample(5)).choices[0].message.content, (await sample(5)).choices[0].message.content);
    });

    it("logprobs and top_logprobs, in a completion and in a stream", async () => {
      const completion = await openai.chat.completions.create({ model: slug, messages, max_tokens: 10, logprobs: true, top_logprobs: 2 });
      const content = completion.choices[0].logprobs!.content!;
      assert.equal(content.length, completion.usage!.completion_tokens);
      assert.equal(content.map((t) => t.token).join(""), completion.choices[0].message.content);
      for (const t of content) {
        assert.equal(t.top_logprobs.length, 2);
        assert.equal(t.top_logprobs[0].logprob, t.logprob, "greedy picks the most likely token");
        assert.ok(t.logprob <= 0 && t.top_logprobs[1].logprob <= t.logprob);
      }
      const stream = await openai.chat.completions.create({ model: slug, messages, max_tokens: 10, logprobs: true, stream: true });
      const streamed: string[] = [];
      for await (const chunk of stream) for (const t of chunk.choices[0]?.logprobs?.content ?? []) streamed.push(t.token);
      assert.deepEqual(
        streamed,
        content.map((t) => t.token),
      );
      const plain = await openai.chat.completions.create({ model: slug, messages, max_tokens: 4 });
      assert.equal(plain.choices[0].logprobs, null);
    });

    it("response_format json_schema with an enum: 20 samples at temperature 1 all parse and match", async () => {
      const rounds = await Promise.all(
        [0, 1, 2, 3].map(() =>
          openai.chat.completions.create({
            model: slug,
            messages,
            max_tokens: 60,
            temperature: 1,
            n: 5,
            response_format: { type: "json_schema", json_schema: { name: "color", schema: colorSchema, strict: true } },
          }),
        ),
      );
      const answers = rounds.flatMap((r) => r.choices.map((c) => c.message.content!));
      assert.equal(answers.length, 20);
      for (const answer of answers) {
        const value = JSON.parse(answer);
        assert.ok(COLORS.includes(value.color) && Number.isInteger(value.size) && Object.keys(value).length === 2, answer);
      }
      const object = await openai.chat.completions.create({
        model: slug,
        messages,
        max_tokens: 100,
        temperature: 1,
        seed: 3,
        response_format: { type: "json_object" },
      });
      if (object.choices[0].finish_reason === "stop") assert.equal(typeof JSON.parse(object.choices[0].message.content!), "object");
      else assert.ok(object.choices[0].message.content!.startsWith("{"));
    });

    it("n: that many choices, indexed, usage adding up, in a completion and in a stream", async () => {
      const one = await openai.chat.completions.create({ model: slug, messages, max_tokens: 6 });
      const three = await openai.chat.completions.create({ model: slug, messages, max_tokens: 6, n: 3 });
      assert.deepEqual(
        three.choices.map((c) => c.index),
        [0, 1, 2],
      );
      assert.equal(three.usage!.prompt_tokens, one.usage!.prompt_tokens);
      assert.equal(three.usage!.completion_tokens, 3 * one.usage!.completion_tokens);
      const stream = await openai.chat.completions.create({
        model: slug,
        messages,
        max_tokens: 6,
        n: 2,
        stream: true,
        stream_options: { include_usage: true },
      });
      const texts = ["", ""];
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        for (const choice of chunk.choices) texts[choice.index] += choice.delta.content ?? "";
        if (chunk.usage) usage = chunk.usage;
      }
      assert.deepEqual(texts, [one.choices[0].message.content, one.choices[0].message.content]);
      assert.equal(usage!.completion_tokens, 2 * one.usage!.completion_tokens);
    });

    it("logit_bias forces and bans tokens; penalties change a repetitive answer", async () => {
      const forced = await openai.chat.completions.create({ model: slug, messages, max_tokens: 5, logit_bias: { "120": 100 } });
      assert.equal(forced.choices[0].message.content, "xxxxx");
      const plain = await openai.chat.completions.create({ model: slug, messages, max_tokens: 60 });
      const first = plain.choices[0].message.content!.codePointAt(0)!;
      // svc-tiny's vocabulary is bytes: an ASCII character's token id is its code.
      const banned = await openai.chat.completions.create({ model: slug, messages, max_tokens: 60, logit_bias: { [String(first)]: -100 } });
      assert.ok(!banned.choices[0].message.content!.includes(String.fromCodePoint(first)));
      const penalised = await openai.chat.completions.create({ model: slug, messages, max_tokens: 60, frequency_penalty: 2, presence_penalty: 2 });
      assert.notEqual(penalised.choices[0].message.content, plain.choices[0].message.content);
    });

    it("accepts fields the API does not define and names them in x-svc-ignored-fields", async () => {
      const { data, response } = await openai.chat.completions
        .create({ model: slug, messages, max_tokens: 2, user: "u1", top_k: 5, chat_template_kwargs: {} } as never)
        .withResponse();
      assert.equal(data.object, "chat.completion");
      assert.equal(response.headers.get("x-svc-ignored-fields"), "top_k, chat_template_kwargs");
    });
  });

  describe("refused with a 400 naming the parameter", () => {
    it("out-of-range and ill-formed values", async () => {
      await refused({ presence_penalty: 2.5 }, "presence_penalty");
      await refused({ frequency_penalty: -3 }, "frequency_penalty");
      await refused({ top_logprobs: 21, logprobs: true }, "top_logprobs");
      await refused({ top_logprobs: 2 }, "top_logprobs");
      await refused({ logit_bias: { "12": 101 } }, "logit_bias");
      await refused({ logit_bias: { abc: 1 } }, "logit_bias");
      await refused({ n: 9 }, "n");
      await refused({ stream_options: { include_usage: true } }, "stream_options");
      await refused({ response_format: { type: "xml" } }, "response_format");
    });

    it("what llama.cpp serving cannot do", async () => {
      await refused({ logit_bias: { "999999": 1 } }, "logit_bias");
      await refused({ response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "string", pattern: "^a+$" } } } }, "response_format");
      // Tools are honoured now (edge-openai-tools.test.ts); a schema a grammar cannot enforce is not.
      await refused(
        { tools: [{ type: "function", function: { name: "f", parameters: { type: "object", properties: { a: { type: "string", pattern: "^a+$" } } } } }] },
        "tools",
      );
      await refused({ audio: { voice: "alloy", format: "mp3" } }, "audio");
      await refused({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "data:," } }] }] }, "messages[0].content");
    });

    it("a prompt longer than the context window, as OpenAI names it", async () => {
      await refused({ messages: [{ role: "user", content: "a".repeat(400) }] }, "messages");
    });
  });

  describe("HTTP hygiene", () => {
    it("x-request-id on answers and errors; a caller's own id is kept", async () => {
      const ok = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/models`);
      assert.match(ok.headers.get("x-request-id") ?? "", /^req_[0-9a-f]{12}[0-9a-z]{6,}$/);
      const missing = await fetch(`${cloud.edgeUrl}/nowhere`);
      assert.equal(missing.status, 404);
      assert.ok(missing.headers.get("x-request-id"));
      const mine = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/models`, { headers: { "x-request-id": "trace-42" } });
      assert.equal(mine.headers.get("x-request-id"), "trace-42");
      const control = await fetch(`${cloud.cloudUrl}/healthz`);
      assert.ok(control.headers.get("x-request-id"));
    });

    it("CORS: preflight answered before auth, answers readable from any origin", async () => {
      const preflight = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/chat/completions`, {
        method: "OPTIONS",
        headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization, content-type" },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("access-control-allow-origin"), "*");
      assert.equal(preflight.headers.get("access-control-allow-headers"), "authorization, content-type");
      assert.match(preflight.headers.get("access-control-allow-methods") ?? "", /POST/);
      const answer = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/models`, { headers: { origin: "https://app.example" } });
      assert.equal(answer.headers.get("access-control-allow-origin"), "*");
      assert.match(answer.headers.get("access-control-expose-headers") ?? "", /x-request-id/);
    });

    it("a JSON body sent as text/plain gets a 400 that names the content type", async () => {
      for (const route of ["chat/completions", "responses"]) {
        const response = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/${route}`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: JSON.stringify({ messages, input: "hi", max_tokens: 2 }),
        });
        const answer = (await response.json()) as { error: { message: string; type: string } };
        assert.equal(response.status, 400, route);
        assert.equal(answer.error.type, "invalid_request_error", route);
        assert.equal(answer.error.message, "the request body must be sent with content-type: application/json", route);
      }
    });

    it("streamed answers (chat and Responses) carry the same CORS, x-request-id and x-svc-ignored-fields headers", async () => {
      for (const [route, body] of [
        ["chat/completions", { messages, max_tokens: 2, stream: true, top_k: 5 }],
        ["responses", { input: "hi", max_output_tokens: 2, stream: true, top_k: 5 }],
      ] as const) {
        const streamed = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/${route}`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: "https://app.example", "x-request-id": `trace-${route.length}` },
          body: JSON.stringify(body),
        });
        assert.equal(streamed.status, 200, route);
        assert.match(streamed.headers.get("content-type") ?? "", /^text\/event-stream/, route);
        assert.equal(streamed.headers.get("access-control-allow-origin"), "*", route);
        assert.match(streamed.headers.get("access-control-expose-headers") ?? "", /x-request-id/, route);
        assert.equal(streamed.headers.get("x-request-id"), `trace-${route.length}`, route);
        assert.equal(streamed.headers.get("x-svc-ignored-fields"), "top_k", route);
        assert.match(await streamed.text(), /data: /, route);
      }
    });

    it("CORS per deployment: its own allow-list decides, in path and host form; null restores the default", async () => {
      const keyed = await client.createDeployment({
        slug: "cors-own",
        target: { kind: "base_model", name: "svc-tiny" },
        authMode: "fixed_api_key",
        corsOrigins: ["https://app.example.com"],
      });
      assert.deepEqual(keyed.corsOrigins, ["https://app.example.com"]);
      const preflight = (origin: string) =>
        fetch(`${cloud.edgeUrl}/d/cors-own/v1/chat/completions`, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } });
      const allowed = await preflight("https://app.example.com");
      assert.equal(allowed.status, 204);
      assert.equal(allowed.headers.get("access-control-allow-origin"), "https://app.example.com");
      assert.equal(allowed.headers.get("vary"), "Origin");
      assert.equal((await preflight("https://evil.example")).status, 403);
      // Host form (fetch cannot set Host): the same deployment's list.
      const hostForm = await rawExchange(
        cloud.edgeUrl,
        `OPTIONS /v1/chat/completions HTTP/1.1\r\nhost: cors-own.${cloud.deployDomain}\r\norigin: https://evil.example\r\naccess-control-request-method: POST\r\nconnection: close\r\n\r\n`,
      );
      assert.equal(hostForm.status, 403);
      // An answer (here a 401: no key) carries the header only for an allowed origin.
      const answered = await fetch(`${cloud.edgeUrl}/d/cors-own/v1/models`, { headers: { origin: "https://app.example.com" } });
      assert.equal(answered.headers.get("access-control-allow-origin"), "https://app.example.com");
      const refused = await fetch(`${cloud.edgeUrl}/d/cors-own/v1/models`, { headers: { origin: "https://evil.example" } });
      assert.equal(refused.headers.get("access-control-allow-origin"), null);
      // Other deployments keep the default, and clearing the list restores it here.
      assert.equal(
        (await fetch(`${cloud.edgeUrl}/d/${slug}/v1/models`, { headers: { origin: "https://evil.example" } })).headers.get("access-control-allow-origin"),
        "*",
      );
      assert.equal((await client.updateDeployment(keyed.id, { corsOrigins: null })).corsOrigins, null);
      assert.equal((await preflight("https://evil.example")).headers.get("access-control-allow-origin"), "*");
      await assert.rejects(
        client.updateDeployment(keyed.id, { corsOrigins: ["https://app.example.com/path"] }),
        /corsOrigins must be null or a list of up to 20 origins/,
      );
    });

    it("GET /v1/models/{id}: the deployment, or 404 naming the model", async () => {
      const model = await openai.models.retrieve(slug);
      assert.equal(model.id, slug);
      await assert.rejects(openai.models.retrieve("gpt-4o"), (e: unknown) => e instanceof OpenAI.NotFoundError && /gpt-4o/.test(e.message));
    });

    it("parser-level refusals use the OpenAI envelope: malformed 400, headers 431, a stalled body 408", async () => {
      const envelope = (body: string) => (JSON.parse(body) as { error: { message: string; type: string } }).error;
      const malformed = await rawExchange(cloud.edgeUrl, "GARBAGE\r\n\r\n");
      assert.equal(malformed.status, 400);
      assert.equal(envelope(malformed.body).type, "invalid_request_error");
      const huge = await rawExchange(cloud.edgeUrl, `GET /d/${slug}/v1/models HTTP/1.1\r\nhost: x\r\nx-big: ${"a".repeat(20_000)}\r\n\r\n`);
      assert.equal(huge.status, 431);
      assert.match(envelope(huge.body).message, /headers/);
      // Headers promise 100 bytes of body; 10 arrive and the rest never does (timeout is 1 s here).
      const stalled = await rawExchange(
        cloud.edgeUrl,
        `POST /d/${slug}/v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"messages`,
      );
      assert.equal(stalled.status, 408);
      assert.equal(envelope(stalled.body).type, "invalid_request_error");
    });
  });
});
