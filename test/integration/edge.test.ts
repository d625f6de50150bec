/**
 * The edge as OpenAI clients see it (issue 4): the official `openai` package on the path form
 * `/d/<slug>/v1`, curl on the host form `<slug>.localhost:E`, auth modes and key revocation,
 * the enabled flag, 404/400/413/429 envelopes, and an OpenAI-compatible upstream (a real HTTP
 * server started here) proxied with streaming, 502 and 504. Real cloud process, real llama.cpp.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import OpenAI from "openai";
import type { CloudClient } from "../../sdk/client.js";
import type { Deployment } from "../../sdk/wire.js";
import { pollUntil } from "../support/poll.js";
import { postWholeBody } from "../support/rawHttp.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";

const run = promisify(execFile);
const QUESTION = [{ role: "user" as const, content: "What color is milk?" }];

describe("edge: OpenAI-compatible deployments", function () {
  this.timeout(60_000);
  let cloud: TestCloud;
  let client: CloudClient;
  let upstream: TestUpstream;

  before(async () => {
    upstream = await startTestUpstream();
    // 127.0.0.1 is a trusted proxy here, so the limiter tests can speak for several client addresses. A TTL far
    // longer than any test: each change below must reach the edge's cache by its change notification, never by the
    // cached state expiring.
    cloud = await startTestCloud({
      env: { SVC_INFERENCE_MAX_QUEUE: "2", SVC_UPSTREAM_TIMEOUT_MS: "1500", SVC_TRUSTED_PROXIES: "127.0.0.1", SVC_EDGE_STATE_TTL_MS: "600000" },
    });
    client = (await newAccount(cloud)).client;
    await client.createDeployment({ slug: "open-base", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
  });
  after(async () => {
    await cloud?.dispose();
    await upstream?.close();
  });

  const sdk = (slug: string, apiKey = "not-needed") => new OpenAI({ baseURL: `${cloud.edgeUrl}/d/${slug}/v1`, apiKey, maxRetries: 0 });
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(cloud.edgeUrl + path, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

  describe("auth none, base model", () => {
    it("answers a non-streaming completion through the openai SDK, ignoring `model`", async () => {
      const completion = await sdk("open-base").chat.completions.create({ model: "gpt-4o", messages: QUESTION, max_tokens: 24, temperature: 0 });
      assert.equal(completion.object, "chat.completion");
      assert.equal(completion.model, "open-base");
      assert.ok(completion.choices[0].message.content!.length > 0);
      assert.ok(["stop", "length"].includes(completion.choices[0].finish_reason));
      assert.ok(completion.usage!.prompt_tokens > 0 && completion.usage!.completion_tokens > 0);
      assert.equal(completion.usage!.total_tokens, completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    });

    it("streams chunks with usage last, and the text equals the non-streamed answer", async () => {
      const plain = await sdk("open-base").chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 24 });
      const stream = await sdk("open-base").chat.completions.create({
        model: "x",
        messages: QUESTION,
        max_tokens: 24,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let usage: OpenAI.CompletionUsage | null | undefined;
      let chunks = 0;
      for await (const chunk of stream) {
        assert.equal(chunk.object, "chat.completion.chunk");
        text += chunk.choices[0]?.delta.content ?? "";
        if (chunk.usage) usage = chunk.usage;
        chunks += 1;
      }
      assert.ok(chunks > 3, `expected several chunks, got ${chunks}`);
      assert.equal(text, plain.choices[0].message.content);
      assert.deepEqual(usage, plain.usage);
    });

    it("honours max_tokens, stop and seeded sampling", async () => {
      const short = await sdk("open-base").chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 3 });
      assert.equal(short.usage!.completion_tokens, 3);
      assert.equal(short.choices[0].finish_reason, "length");
      const full = (await sdk("open-base").chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 24 })).choices[0].message.content!;
      const stopAt = full.slice(2, 4);
      const stopped = await sdk("open-base").chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 24, stop: [stopAt] });
      assert.equal(stopped.choices[0].message.content, full.slice(0, full.indexOf(stopAt)));
      const sample = () => sdk("open-base").chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 24, temperature: 1.5, top_p: 0.95, seed: 7 });
      assert.equal((await sample()).choices[0].message.content, (await sample()).choices[0].message.content);
    });

    it("serves the host form to curl, streaming and not", async () => {
      const url = `http://open-base.localhost:${new URL(cloud.edgeUrl).port}/v1/chat/completions`;
      const body = JSON.stringify({ messages: QUESTION, max_tokens: 16 });
      const { stdout } = await run("curl", ["-sS", "-H", "content-type: application/json", "-d", body, "-w", "\n%{http_code}", url]);
      const [json, status] = splitStatus(stdout);
      assert.equal(status, 200);
      assert.equal(JSON.parse(json).object, "chat.completion");
      const streamed = await run("curl", [
        "-sS",
        "-N",
        "-H",
        "content-type: application/json",
        "-d",
        JSON.stringify({ messages: QUESTION, max_tokens: 16, stream: true }),
        url,
      ]);
      const frames = streamed.stdout.split("\n\n").filter(Boolean);
      assert.equal(frames.at(-1), "data: [DONE]");
      assert.equal(JSON.parse(frames[0].slice(6)).choices[0].delta.role, "assistant");
      const models = await run("curl", ["-sS", `http://open-base.localhost:${new URL(cloud.edgeUrl).port}/v1/models`]);
      assert.deepEqual(
        JSON.parse(models.stdout).data.map((m: { id: string }) => m.id),
        ["open-base"],
      );
    });

    it("lists the deployment's one model", async () => {
      const models = await sdk("open-base").models.list();
      assert.deepEqual(
        models.data.map((m) => m.id),
        ["open-base"],
      );
    });
  });

  describe("routing and errors", () => {
    it("404s unknown slugs, the doubled route, and the full operation URL given as baseURL", async () => {
      await assert.rejects(sdk("no-such-slug").chat.completions.create({ model: "x", messages: QUESTION }), (e: unknown) => e instanceof OpenAI.NotFoundError);
      const doubled = await post("/d/open-base/v1/chat/completions/chat/completions", JSON.stringify({ messages: QUESTION }));
      assert.equal(doubled.status, 404);
      assertEnvelope(await doubled.json());
      const misconfigured = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/open-base/v1/chat/completions`, apiKey: "x", maxRetries: 0 });
      await assert.rejects(misconfigured.chat.completions.create({ model: "x", messages: QUESTION }), (e: unknown) => e instanceof OpenAI.NotFoundError);
      const bareHost = await post("/v1/chat/completions", JSON.stringify({ messages: QUESTION }));
      assert.equal(bareHost.status, 404);
      assertEnvelope(await bareHost.json());
    });

    it("answers malformed JSON, missing messages and an oversized body with the OpenAI envelope", async () => {
      const malformed = await post("/d/open-base/v1/chat/completions", "{not json");
      assert.equal(malformed.status, 400);
      assertEnvelope(await malformed.json(), "invalid_request_error");
      const missing = await post("/d/open-base/v1/chat/completions", JSON.stringify({ model: "x" }));
      assert.equal(missing.status, 400);
      const body = await missing.json();
      assertEnvelope(body, "invalid_request_error");
      assert.equal(body.error.param, "messages");
      const oversized = await post("/d/open-base/v1/chat/completions", JSON.stringify({ messages: [{ role: "user", content: "x".repeat(2 << 20) }] }));
      assert.equal(oversized.status, 413);
      assertEnvelope(await oversized.json());
      await assert.rejects(sdk("open-base").chat.completions.create({ model: "x", messages: [] }), (e: unknown) => e instanceof OpenAI.BadRequestError);
    });

    it("a client still sending an oversized body reads the 413 instead of a broken connection", async () => {
      const body = Buffer.from(JSON.stringify({ messages: [{ role: "user", content: "x".repeat(8 << 20) }] }));
      const response = await postWholeBody(cloud.edgeUrl, "/d/open-base/v1/chat/completions", body, { "content-type": "application/json" });
      assert.equal(response.status, 413);
      assertEnvelope(JSON.parse(response.body));
    });

    it("answers 429 with Retry-After beyond the queue bound, and serves the rest", async () => {
      // 30 at once against a bound of 2: with 10, a slow store (PostgreSQL under CI load) let the
      // child answer each short reply before the next few arrived, and no request was refused.
      const responses = await Promise.all(
        Array.from({ length: 30 }, () => post("/d/open-base/v1/chat/completions", JSON.stringify({ messages: QUESTION, max_tokens: 64 }))),
      );
      const statuses = responses.map((r) => r.status);
      assert.ok(statuses.includes(429), `expected a 429 among ${statuses}`);
      assert.ok(statuses.includes(200), `expected some 200s among ${statuses}`);
      const limited = responses.find((r) => r.status === 429)!;
      assert.ok(Number(limited.headers.get("retry-after")) >= 1);
      assertEnvelope(await limited.json(), "rate_limit_error");
      await Promise.all(responses.filter((r) => !r.bodyUsed).map((r) => r.arrayBuffer()));
    });
  });

  describe("auth fixed_api_key", () => {
    let secured: Deployment;
    let key: string;
    let keyId: string;

    before(async () => {
      secured = await client.createDeployment({ slug: "secured-base", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" });
      const created = await client.createDeploymentKey(secured.id, { label: "test" });
      key = created.key;
      keyId = created.id;
    });

    const ask = (apiKey?: string) =>
      post("/d/secured-base/v1/chat/completions", JSON.stringify({ messages: QUESTION, max_tokens: 4 }), apiKey ? { authorization: `Bearer ${apiKey}` } : {});

    it("requires an enabled key of the deployment", async () => {
      const answer = await sdk("secured-base", key).chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 4 });
      assert.ok(answer.choices[0].message.content);
      const missing = await ask();
      assert.equal(missing.status, 401);
      assertEnvelope(await missing.json(), "authentication_error");
      await assert.rejects(
        sdk("secured-base", key + "x").chat.completions.create({ model: "x", messages: QUESTION }),
        (e: unknown) => e instanceof OpenAI.AuthenticationError,
      );
      await assert.rejects(sdk("secured-base").models.list(), (e: unknown) => e instanceof OpenAI.AuthenticationError);
    });

    it("records lastUsedAt in the background", async () => {
      assert.equal((await ask(key)).status, 200);
      await pollUntil(async () => (await client.listDeploymentKeys(secured.id)).find((k) => k.id === keyId)?.lastUsedAt, {
        timeoutMs: 5000,
        description: "lastUsedAt to be written",
      });
    });

    it("opens with auth none and enforces the same keys again when switched back", async () => {
      await client.updateDeployment(secured.id, { authMode: "none" });
      assert.equal((await ask()).status, 200);
      await client.updateDeployment(secured.id, { authMode: "fixed_api_key" });
      assert.equal((await ask()).status, 401);
      assert.equal((await ask(key)).status, 200);
    });

    it("404s while disabled and serves again when enabled", async () => {
      await client.updateDeployment(secured.id, { enabled: false });
      const disabled = await ask(key);
      assert.equal(disabled.status, 404);
      assertEnvelope(await disabled.json());
      await client.updateDeployment(secured.id, { enabled: true });
      assert.equal((await ask(key)).status, 200);
    });

    // The edge and the control plane share one process here, so revoking invalidates the key before the call
    // returns; how long it takes across processes is measured in `npm run bench -- edge`.
    it("rejects a revoked key from the first request after the revoke returns", async () => {
      assert.equal((await ask(key)).status, 200);
      await client.revokeDeploymentKey(secured.id, keyId);
      assert.equal((await ask(key)).status, 401);
    });

    it("rate limits failed authentication per client address", async () => {
      const attacker = { "x-forwarded-for": "198.51.100.7" };
      const statuses: number[] = [];
      for (let i = 0; i < 25; i++) {
        const res = await post("/d/secured-base/v1/chat/completions", JSON.stringify({ messages: QUESTION }), {
          ...attacker,
          authorization: `Bearer svc_live_guess${i}`,
        });
        statuses.push(res.status);
        if (res.status === 429) {
          assert.ok(Number(res.headers.get("retry-after")) >= 1);
          assertEnvelope(await res.json(), "rate_limit_error");
          break;
        }
        await res.arrayBuffer();
      }
      assert.equal(statuses.at(-1), 429, `statuses: ${statuses}`);
      // Other addresses are unaffected.
      assert.equal((await ask()).status, 401);
    });

    it("an untrusted peer cannot pick its own address with X-Forwarded-For (issue 11)", async () => {
      // A second cloud with the default (no trusted proxies): every request below comes from 127.0.0.1.
      const strict = await startTestCloud();
      try {
        const owner = await newAccount(strict);
        const dep = await owner.client.createDeployment({ slug: "strict-proxy", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" });
        await owner.client.createDeploymentKey(dep.id, { label: "k" });
        const statuses: number[] = [];
        for (let i = 0; i < 25 && statuses.at(-1) !== 429; i++) {
          const res = await fetch(`${strict.edgeUrl}/d/strict-proxy/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer svc_live_guess${i}`, "x-forwarded-for": `198.51.100.${i}` },
            body: JSON.stringify({ messages: QUESTION }),
          });
          statuses.push(res.status);
          await res.arrayBuffer();
        }
        assert.equal(statuses.at(-1), 429, `a new X-Forwarded-For per guess was not limited: ${statuses}`);
      } finally {
        await strict.dispose();
      }
    });

    it("never refuses a valid key because another client on the same address sent bad ones (issue 12 item 13)", async () => {
      // Every local client is 127.0.0.1; this one is misconfigured: no key, a revoked key, keys of nothing.
      const sameAddress = { "x-forwarded-for": "203.0.113.9" };
      const stale = await client.createDeploymentKey(secured.id, { label: "stale" });
      await client.revokeDeploymentKey(secured.id, stale.id);
      const valid = (await client.createDeploymentKey(secured.id, { label: "valid" })).key;
      const badKeys = [undefined, stale.key, "svc_live_not-a-key", "garbage"];
      const body = JSON.stringify({ messages: QUESTION, max_tokens: 4 });
      let limited = false;
      for (let i = 0; i < 100 && !limited; i++) {
        const bad = badKeys[i % badKeys.length];
        const res = await post("/d/secured-base/v1/chat/completions", body, { ...sameAddress, ...(bad ? { authorization: `Bearer ${bad}` } : {}) });
        await res.arrayBuffer();
        limited = res.status === 429;
      }
      assert.ok(limited, "the misconfigured client is rate limited");
      const res = await post("/d/secured-base/v1/chat/completions", body, { ...sameAddress, authorization: `Bearer ${valid}` });
      assert.equal(res.status, 200, await res.clone().text());
      await res.arrayBuffer();
    });

    it("404s a deleted deployment", async () => {
      await client.deleteDeployment(secured.id);
      assert.equal((await ask(key)).status, 404);
    });
  });

  describe("upstream backends", () => {
    before(async () => {
      const env = { ...process.env, SVC_CLOUD_URL: cloud.cloudUrl, SVC_HOME: cloud.home };
      await run(
        process.execPath,
        [cliPath, "models", "add", "--upstream", `${upstream.url}/v1`, "--name", "gpu-box", "--adapter-model", "quickstart-lora", "--data", cloud.dataDir],
        { env },
      );
      await run(process.execPath, [cliPath, "models", "add", "--upstream", "http://127.0.0.1:9/v1", "--name", "dead-box", "--data", cloud.dataDir], { env });
      await client.createDeployment({ slug: "via-upstream", target: { kind: "base_model", name: "gpu-box" }, authMode: "none" });
      await client.createDeployment({ slug: "dead-upstream", target: { kind: "base_model", name: "dead-box" }, authMode: "none" });
    });

    it("proxies a completion with the adapter model name", async () => {
      const completion = await sdk("via-upstream").chat.completions.create({ model: "ignored", messages: QUESTION, max_tokens: 5 });
      assert.equal(completion.choices[0].message.content, "upstream: What color is milk?");
      assert.equal(upstream.lastBody?.model, "quickstart-lora");
      assert.equal(upstream.lastBody?.max_tokens, 5);
      assert.equal(completion.usage!.completion_tokens, 4);
    });

    it("serves a replaced model's new backend from the first request after the replace (issue 15)", async () => {
      await sdk("via-upstream").chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 5 });
      assert.equal(upstream.lastBody?.model, "quickstart-lora");
      const workerToken = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
      const replaced = await fetch(`${cloud.cloudUrl}/v1/models`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${workerToken}` },
        body: JSON.stringify({ name: "gpu-box", upstreamUrl: `${upstream.url}/v1`, adapterModel: "other-lora", replace: true }),
      });
      assert.equal(replaced.status, 201, await replaced.text());
      await sdk("via-upstream").chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 5 });
      assert.equal(upstream.lastBody?.model, "other-lora");
    });

    it("streams the upstream's chunks through as they arrive", async () => {
      const stream = await sdk("via-upstream").chat.completions.create({ model: "x", messages: [{ role: "user", content: "hold" }], stream: true });
      const texts: string[] = [];
      for await (const chunk of stream) {
        const text = chunk.choices[0]?.delta.content;
        if (!text) continue;
        texts.push(text);
        // The upstream holds its second chunk until the first one has reached us.
        if (texts.length === 1) upstream.releaseHeld();
      }
      assert.deepEqual(texts, ["first ", "second"]);
    });

    it("answers 502 when the upstream is unreachable and 504 when it does not answer in time", async () => {
      await assert.rejects(sdk("dead-upstream").chat.completions.create({ model: "x", messages: QUESTION }), (e: unknown) => {
        assert.ok(e instanceof OpenAI.APIError && e.status === 502, String(e));
        assert.match(e.message, /upstream http:\/\/127\.0\.0\.1:9\/v1/);
        return true;
      });
      const hung = await post("/d/via-upstream/v1/chat/completions", JSON.stringify({ messages: [{ role: "user", content: "hang" }] }));
      assert.equal(hung.status, 504);
      assertEnvelope(await hung.json(), "server_error");
    });
  });

  describe("inference worker", () => {
    it("restarts the llama.cpp child after it dies and keeps serving", async () => {
      const childPid = await inferenceChildPid(cloud.process.pid!);
      process.kill(childPid, "SIGKILL");
      const answer = await pollUntil(
        async () => {
          const res = await post("/d/open-base/v1/chat/completions", JSON.stringify({ messages: QUESTION, max_tokens: 4 }));
          if (res.status === 200) return res.json();
          assert.ok(res.status === 503, `unexpected ${res.status}`);
          assertEnvelope(await res.json(), "server_error");
          return undefined;
        },
        { timeoutMs: 15_000, description: "the restarted inference worker to answer" },
      );
      assert.ok(answer.choices[0].message.content);
      assert.notEqual(await inferenceChildPid(cloud.process.pid!), childPid);
    });
  });
});

function assertEnvelope(body: any, type?: string): void {
  assert.ok(body?.error, `no error envelope in ${JSON.stringify(body)}`);
  assert.deepEqual(Object.keys(body.error).sort(), ["code", "message", "param", "type"]);
  assert.equal(typeof body.error.message, "string");
  if (type) assert.equal(body.error.type, type);
}

function splitStatus(output: string): [string, number] {
  const at = output.lastIndexOf("\n");
  return [output.slice(0, at), Number(output.slice(at + 1))];
}

async function inferenceChildPid(cloudPid: number): Promise<number> {
  const { stdout } = await run("ps", ["-o", "pid=,args=", "--ppid", String(cloudPid)]);
  const line = stdout.split("\n").find((l) => l.includes("inferenceChild"));
  if (!line) throw new Error(`no inference child under ${cloudPid}:\n${stdout}`);
  return Number(line.trim().split(/\s+/)[0]);
}

interface TestUpstream {
  url: string;
  lastBody: any;
  releaseHeld(): void;
  close(): Promise<void>;
}

/** A small OpenAI-compatible server: echoes the last user message, can hold or hang a stream. */
async function startTestUpstream(): Promise<TestUpstream> {
  let release: () => void = () => {};
  const held = () => new Promise<void>((resolve) => (release = resolve));
  const state: TestUpstream = {
    url: "",
    lastBody: null,
    releaseHeld: () => release(),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer(async (req, res) => {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    if (req.method !== "POST" || req.url !== "/v1/chat/completions") {
      res.writeHead(404).end();
      return;
    }
    const body = JSON.parse(raw);
    state.lastBody = body;
    const question: string = body.messages.at(-1).content;
    if (question === "hang") return; // never answers: the edge's timeout must fire
    const usage = { prompt_tokens: 7, completion_tokens: 4, total_tokens: 11 };
    if (!body.stream) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "u1",
          object: "chat.completion",
          created: 0,
          model: body.model,
          choices: [{ index: 0, message: { role: "assistant", content: `upstream: ${question}` }, finish_reason: "stop" }],
          usage,
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const chunk = (content: string | null, finish: string | null) =>
      `data: ${JSON.stringify({ id: "u1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta: content === null ? {} : { content }, finish_reason: finish }] })}\n\n`;
    const waitForRelease = held();
    res.write(chunk("first ", null));
    await waitForRelease;
    res.write(chunk("second", null));
    res.write(chunk(null, "stop"));
    res.write(`data: ${JSON.stringify({ id: "u1", object: "chat.completion.chunk", created: 0, model: body.model, choices: [], usage })}\n\n`);
    res.end("data: [DONE]\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}
