/** The Playground's numbers per reply (ui-shared/replyStats.ts) and the usage chunk they read. */
import assert from "node:assert/strict";
import { chunkUsage } from "../../../ui-shared/chatChunks.js";
import { formatMs, replyStats, replyStatsText } from "../../../ui-shared/replyStats.js";
import { parseRoute, playgroundHref } from "../../../ui-shared/routes.js";

describe("Playground reply stats", () => {
  it("time to first token from the send; tokens/s after the first token, the wait for it not counted", () => {
    const stats = replyStats({ sentAt: 1000, firstTokenAt: 1250, endedAt: 2250, completionTokens: 25 });
    assert.deepEqual(stats, { timeToFirstTokenMs: 250, tokensPerSecond: 24, tokens: 25, totalMs: 1250 });
    assert.equal(replyStatsText(stats), "first token 250 ms · 24.0 tokens/s · 25 tokens");
    // A short reply after a cold start (2 s to the first token) reads its decoding speed, not 8 tokens/s.
    assert.equal(replyStats({ sentAt: 0, firstTokenAt: 2000, endedAt: 2500, completionTokens: 21 }).tokensPerSecond, 40);
    // Text arriving in pieces: the last tokens landing together do not make the rate absurd.
    assert.equal(replyStats({ sentAt: 0, firstTokenAt: 30, endedAt: 30.4, completionTokens: 4 }).tokensPerSecond!.toFixed(0), "132");
  });

  it("says only what is known: nothing yet, then the first token, then the rest", () => {
    assert.equal(replyStatsText(replyStats({ sentAt: 0 })), "");
    assert.equal(replyStatsText(replyStats({ sentAt: 0, firstTokenAt: 1500 })), "first token 1.50 s");
    // No token count from the server (stopped, or an upstream without usage): no rate is made up.
    assert.deepEqual(replyStats({ sentAt: 0, firstTokenAt: 10, endedAt: 500 }), { timeToFirstTokenMs: 10, tokensPerSecond: null, tokens: null, totalMs: 500 });
    assert.equal(replyStatsText(replyStats({ sentAt: 0, firstTokenAt: 10, endedAt: 40, completionTokens: 1 })), "first token 10 ms · 25.0 tokens/s · 1 token");
    // A reply that never produced text (an error) has no first token.
    assert.equal(replyStats({ sentAt: 0, endedAt: 40, completionTokens: 0 }).timeToFirstTokenMs, null);
  });

  it("rounds fast rates and formats times", () => {
    assert.equal(replyStatsText(replyStats({ sentAt: 0, firstTokenAt: 5, endedAt: 100, completionTokens: 31 })), "first token 5 ms · 310 tokens/s · 31 tokens");
    assert.equal(formatMs(999.4), "999 ms");
    assert.equal(formatMs(1234), "1.23 s");
  });

  it("reads the usage of the last chunk, and of a whole completion", () => {
    assert.deepEqual(chunkUsage(JSON.stringify({ choices: [], usage: { prompt_tokens: 4, completion_tokens: 7, total_tokens: 11 } })), {
      promptTokens: 4,
      completionTokens: 7,
    });
    assert.equal(chunkUsage(JSON.stringify({ choices: [{ delta: { content: "x" } }], usage: null })), undefined);
    assert.equal(chunkUsage("not json"), undefined);
  });

  it("routes: the job's adapter beside its base model", () => {
    assert.equal(playgroundHref("j-1", { compare: true }), "#/playground?job=j-1&compare=base");
    assert.deepEqual(parseRoute(playgroundHref("j-1", { compare: true })), { view: "playground", jobId: "j-1", compare: true });
    assert.deepEqual(parseRoute("#/playground?job=j-1&compare=other"), { view: "playground", jobId: "j-1" });
  });
});
