/** `svc keys` flags read into key rules (issue 28). */
import assert from "node:assert/strict";
import { parseDuration, rulesFromFlags } from "../../../cli/keyFlags.js";
import { formatResetDuration } from "../../../cloud/edge/keyMeter.js";

const NOW = Date.parse("2026-11-27T12:00:00.000Z");

describe("svc keys flags", () => {
  it("reads durations, limits and budgets; none removes a rule", () => {
    assert.equal(parseDuration("7d", "--expires-in"), 7 * 86_400_000);
    assert.equal(parseDuration("0", "--grace"), 0);
    assert.throws(() => parseDuration("soon", "--grace"), /--grace "soon" is not a duration/);
    assert.deepEqual(rulesFromFlags({ "expires-in": "1h", rpm: "30", budget: "100000/month" }, NOW), {
      expiresAt: "2026-11-27T13:00:00.000Z",
      limits: { requestsPerMinute: 30, tokensPerMinute: null },
      budget: { tokens: 100000, period: "month" },
    });
    assert.deepEqual(rulesFromFlags({ budget: "500" }, NOW), { budget: { tokens: 500, period: "total" } });
    assert.deepEqual(rulesFromFlags({ tpm: "none", "expires-at": "none", budget: "none" }, NOW, { requestsPerMinute: 30, tokensPerMinute: 9 }), {
      expiresAt: null,
      limits: { requestsPerMinute: 30, tokensPerMinute: null },
      budget: null,
    });
    assert.throws(() => rulesFromFlags({ rpm: "0" }, NOW), /--rpm must be a whole number from 1/);
    assert.throws(() => rulesFromFlags({ "expires-in": "1h", "expires-at": "2027-01-01T00:00:00Z" }, NOW), /not both/);
  });

  it("writes reset durations as OpenAI's x-ratelimit-reset-* headers do", () => {
    assert.equal(formatResetDuration(250), "250ms");
    assert.equal(formatResetDuration(17_000), "17s");
    assert.equal(formatResetDuration(16_200), "17s");
    assert.equal(formatResetDuration(360_000), "6m0s");
    assert.equal(formatResetDuration(3_723_000), "1h2m3s");
  });
});
