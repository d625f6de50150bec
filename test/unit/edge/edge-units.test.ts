/** Pure pieces of the edge and the inference layer: host routing, request parsing, fair queue, limiter. */
import assert from "node:assert/strict";
import { AuthFailureLimiter } from "../../../cloud/edge/authFailureLimiter.js";
import { slugFromHost } from "../../../cloud/edge/hostRouting.js";
import { ClientGone } from "../../../cloud/inference/clientGone.js";
import { FairQueue } from "../../../cloud/inference/fairQueue.js";
import { parseChatRequest } from "../../../cloud/inference/openaiRequest.js";
import { parseResponsesRequest } from "../../../cloud/inference/responsesRequest.js";
import { InferenceError } from "../../../cloud/inference/types.js";

describe("edge: slugFromHost", () => {
  it("takes one label in front of the deploy domain, with or without a port", () => {
    assert.equal(slugFromHost("demo.localhost:7871", "localhost:7871"), "demo");
    assert.equal(slugFromHost("DEMO.Localhost:7871", "localhost:7871"), "demo");
    assert.equal(slugFromHost("demo.example.dev:443", "example.dev"), "demo");
    assert.equal(slugFromHost("localhost:7871", "localhost:7871"), null);
    assert.equal(slugFromHost("a.b.localhost:7871", "localhost:7871"), null);
    assert.equal(slugFromHost("demo.localhost:9999", "localhost:7871"), null);
    assert.equal(slugFromHost(undefined, "localhost:7871"), null);
  });
});

describe("inference: parseChatRequest", () => {
  const bad = (body: unknown, param: string | undefined) =>
    assert.throws(
      () => parseChatRequest(body),
      (e: unknown) => e instanceof InferenceError && e.status === 400 && e.extra.param === param,
    );

  it("maps OpenAI fields to engine parameters and ignores model", () => {
    const r = parseChatRequest({
      model: "gpt-4o",
      messages: [
        { role: "developer", content: [{ type: "text", text: "be brief" }] },
        { role: "user", content: "hi" },
      ],
      max_tokens: 5,
      temperature: 0.5,
      top_p: 0.9,
      stop: "\n",
      seed: 3,
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.deepEqual(r.params, {
      messages: [
        { role: "system", content: "be brief" },
        { role: "user", content: "hi" },
      ],
      maxTokens: 5,
      temperature: 0.5,
      topP: 0.9,
      stop: ["\n"],
      seed: 3,
    });
    assert.equal(r.stream, true);
    assert.equal(r.includeUsage, true);
  });

  it("names the offending field", () => {
    bad({}, "messages");
    bad({ messages: [] }, "messages");
    bad({ messages: [{ role: "robot", content: "x" }] }, "messages[0].role");
    bad({ messages: [{ role: "user", content: "x" }], temperature: 3 }, "temperature");
    bad({ messages: [{ role: "user", content: "x" }], max_tokens: 0 }, "max_tokens");
    bad({ messages: [{ role: "user", content: "x" }], stop: ["a", "b", "c", "d", "e"] }, "stop");
    bad([1], undefined);
  });

  it("lists every role it accepts when refusing one, developer included", () => {
    assert.throws(() => parseChatRequest({ messages: [{ role: "wizard", content: "x" }] }), {
      message: "messages[0].role must be one of system, developer, user, assistant, tool",
    });
  });
});

describe("inference: parseResponsesRequest", () => {
  it("names the Responses field, in the param and in the message", () => {
    assert.throws(
      () => parseResponsesRequest({ input: "hi", max_output_tokens: 0 }),
      (e: unknown) =>
        e instanceof InferenceError && e.extra.param === "max_output_tokens" && e.message === "max_output_tokens must be an integer from 1 to 4096",
    );
  });
});

describe("inference: FairQueue", () => {
  it("serves waiting keys round-robin and refuses beyond the bound with Retry-After", async () => {
    const queue = new FairQueue(1, 3);
    const order: string[] = [];
    const first = await queue.acquire("a");
    const waiting = [queue.acquire("a"), queue.acquire("a"), queue.acquire("b")].map((p, i) =>
      p.then((release) => (order.push(["a1", "a2", "b1"][i]), release)),
    );
    await assert.rejects(queue.acquire("c"), (e: unknown) => e instanceof InferenceError && e.status === 429 && (e.extra.retryAfter ?? 0) >= 1);
    // Each release admits the next waiter; key "a" goes to the back after each turn.
    first();
    (await waiting[0])();
    (await waiting[2])();
    (await waiting[1])();
    assert.deepEqual(order, ["a1", "b1", "a2"]);
    assert.deepEqual(queue.stats, { running: 0, waiting: 0 });
  });

  it("drops a waiter whose client went away", async () => {
    const queue = new FairQueue(1, 1);
    const release = await queue.acquire("a");
    const abort = new AbortController();
    const waiter = queue.acquire("a", abort.signal);
    abort.abort();
    await assert.rejects(waiter, (e: unknown) => e instanceof InferenceError && e.status === 499);
    assert.equal(queue.stats.waiting, 0);
    release();
  });

  it("drops a waiter whose client went away, told by the edge's ClientGone", async () => {
    const queue = new FairQueue(1, 1);
    const release = await queue.acquire("a");
    const gone = new ClientGone();
    const waiter = queue.acquire("a", gone);
    gone.abort();
    await assert.rejects(waiter, (e: unknown) => e instanceof InferenceError && e.status === 499);
    assert.equal(queue.stats.waiting, 0);
    release();
  });
});

describe("inference: ClientGone", () => {
  it("calls each listener once, at the first abort, and never a removed one", () => {
    const gone = new ClientGone();
    const calls: string[] = [];
    const removed = () => calls.push("removed");
    gone.addEventListener("abort", () => calls.push("a"));
    gone.addEventListener("abort", removed);
    gone.addEventListener("abort", () => calls.push("b"), { once: true });
    gone.removeEventListener("abort", removed);
    assert.equal(gone.aborted, false);
    gone.abort();
    gone.abort();
    assert.equal(gone.aborted, true);
    assert.deepEqual(calls, ["a", "b"]);
    // As with an AbortSignal, a listener added after the abort is not called: callers check `aborted`.
    gone.addEventListener("abort", () => calls.push("late"));
    gone.abort();
    assert.deepEqual(calls, ["a", "b"]);
  });
});

describe("edge: AuthFailureLimiter", () => {
  it("blocks an address after its burst of failures and leaves others alone", () => {
    const limiter = new AuthFailureLimiter({ burst: 3, refillPerSecond: 0.5 });
    for (let i = 0; i < 3; i++) {
      assert.equal(limiter.retryAfter("10.0.0.1"), 0);
      limiter.recordFailure("10.0.0.1");
    }
    assert.ok(limiter.retryAfter("10.0.0.1") >= 1);
    assert.equal(limiter.retryAfter("10.0.0.2"), 0);
    limiter.close();
  });

  it("stays at its bound under 10,000 random bucket names, keeping the most recent offender", () => {
    const limiter = new AuthFailureLimiter({ burst: 2, refillPerSecond: 0.01, maxBuckets: 1000 });
    limiter.recordFailure("10.0.0.1");
    limiter.recordFailure("10.0.0.1");
    for (let i = 0; i < 10_000; i++) {
      limiter.recordFailure(`198.51.${i >> 8}.${i & 255} *`);
      if (i % 500 === 0) limiter.recordFailure("10.0.0.1"); // keeps failing: stays among the recent
    }
    assert.equal(limiter.size, 1000);
    assert.ok(limiter.retryAfter("10.0.0.1") >= 1, "the persistent offender is still limited");
    limiter.close();
  });
});
