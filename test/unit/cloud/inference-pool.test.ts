/**
 * The inference child's pool of contexts (worker/engineCache.ts, on the real svc-tiny model), its
 * message coalescing (worker/outbox.ts), and how the pool is sized from the settings.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { defaultConcurrency, settingsFromEnv } from "../../../cloud/inference/index.js";
import { EngineCache } from "../../../cloud/inference/worker/engineCache.js";
import { Outbox } from "../../../cloud/inference/worker/outbox.js";
import type { FromWorker } from "../../../cloud/inference/worker/protocol.js";

const modelPath = path.resolve(import.meta.dirname, "../../../models/svc-tiny.gguf");

describe("inference: pool of contexts per (model, adapter)", function () {
  this.timeout(60_000);
  let cache: EngineCache;
  afterEach(async () => cache?.close());

  it("gives requests at once distinct contexts, up to the pool size, and reuses idle ones", async () => {
    cache = new EngineCache({ threads: 1, maxModelBytes: 1 << 30, maxContexts: 8, contextsPerModel: 3 });
    const leases = await Promise.all([0, 1, 2].map(() => cache.session(modelPath, null)));
    assert.equal(new Set(leases.map((l) => l.session)).size, 3, "three requests, three contexts");
    // Every context busy: the fourth shares one (its session queues the request) instead of growing the pool.
    const fourth = await cache.session(modelPath, null);
    assert.ok(leases.some((l) => l.session === fourth.session));
    fourth.release();
    leases[1].release();
    const again = await cache.session(modelPath, null);
    assert.equal(again.session, leases[1].session, "the idle context is reused, not a new one made");
    for (const lease of [...leases, again]) lease.release();
  });

  it("answers the same seeded request identically on every context of the pool", async () => {
    cache = new EngineCache({ threads: 1, maxModelBytes: 1 << 30, maxContexts: 8, contextsPerModel: 3 });
    const request = { messages: [{ role: "user" as const, content: "Tell me about cats." }], maxTokens: 30, temperature: 1, seed: 3 };
    const leases = await Promise.all([0, 1, 2].map(() => cache.session(modelPath, null)));
    const texts = await Promise.all(leases.map((l) => l.session.generate(request).then((r) => r.text)));
    assert.equal(new Set(texts).size, 1, texts.join(" | "));
    for (const lease of leases) lease.release();
  });
});

describe("inference: Outbox", () => {
  // An interval no test outlasts: whatever is written, is written by push or last, not the timer.
  const HOUR = 3_600_000;
  const usage = { promptTokens: 1, completionTokens: 3, totalTokens: 4 };

  it("sends a generation's first text at once, joins the rest, and sends it with done", () => {
    const writes: FromWorker[][] = [];
    const outbox = new Outbox((messages) => writes.push(messages), HOUR);
    outbox.text({ type: "text", id: 1, text: "Ca" });
    assert.deepEqual(writes, [[{ type: "text", id: 1, text: "Ca" }]]);
    outbox.text({ type: "text", id: 1, text: "ts", logprobs: [{ token: "t", logprob: -1, bytes: [116], topLogprobs: [] }] });
    outbox.text({ type: "text", id: 2, text: "Hi" });
    outbox.text({ type: "text", id: 1, text: " are" });
    // Generation 2's first text went out at once, carrying generation 1's pending text with it.
    assert.equal(writes.length, 2);
    assert.deepEqual(writes[1], [
      { type: "text", id: 1, text: "ts", logprobs: [{ token: "t", logprob: -1, bytes: [116], topLogprobs: [] }] },
      { type: "text", id: 2, text: "Hi" },
    ]);
    outbox.text({ type: "text", id: 1, text: " small" });
    outbox.text({ type: "text", id: 1, text: " animals" });
    outbox.last({ type: "done", id: 1, finishReason: "stop", usage });
    assert.deepEqual(writes[2], [
      { type: "text", id: 1, text: " are small animals" },
      { type: "done", id: 1, finishReason: "stop", usage },
    ]);
    outbox.flush();
    assert.equal(writes.length, 3, "nothing left over");
  });
});

describe("inference: pool size settings", () => {
  it("defaults to two contexts per core within 2-8, and keeps room for one pool", () => {
    assert.equal(defaultConcurrency(1), 2);
    assert.equal(defaultConcurrency(2), 4);
    assert.equal(defaultConcurrency(64), 8);
    const settings = settingsFromEnv({ SVC_INFERENCE_CONCURRENCY: "12", SVC_INFERENCE_CONTEXTS: "3" });
    assert.equal(settings.concurrency, 12);
    assert.equal(settings.maxContexts, 12, "a bound below the pool would evict and recreate contexts every request");
  });
});
