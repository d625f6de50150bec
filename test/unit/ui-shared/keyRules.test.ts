/** Key rules in words, the issue form read into rules, and usage per minute (issue 28). */
import assert from "node:assert/strict";
import type { DeploymentKey, UsageBucket, UsageReport } from "../../../sdk/wire.js";
import { describeErrors, describePercentiles, describeRules, describeUse, ruleFieldProblem, rulesFromForm, usageSeries } from "../../../ui-shared/keyRules.js";

const NOW = Date.parse("2026-11-27T12:00:30.000Z");
const key = (over: Partial<DeploymentKey> = {}): DeploymentKey => ({
  id: "k1",
  deploymentId: "d1",
  label: "ci",
  prefix: "svc_live_abc",
  enabled: true,
  lastUsedAt: null,
  createdAt: "2026-11-27T10:00:00.000Z",
  expiresAt: null,
  limits: { requestsPerMinute: null, tokensPerMinute: null },
  budget: null,
  rotatedTo: null,
  usage: { requests: 0, promptTokens: 0, completionTokens: 0, minuteRequests: 0, minuteTokens: 0, budgetTokens: 0 },
  ...over,
});

describe("key rules in the UI", () => {
  it("reads the issue form: blank fields are no rule, the expiry is counted from now", () => {
    assert.deepEqual(rulesFromForm({ expiryMs: null, requestsPerMinute: "", tokensPerMinute: " ", budgetTokens: "", budgetPeriod: "month" }, NOW), {});
    assert.deepEqual(rulesFromForm({ expiryMs: 3_600_000, requestsPerMinute: "30", tokensPerMinute: "", budgetTokens: "1000", budgetPeriod: "day" }, NOW), {
      expiresAt: "2026-11-27T13:00:30.000Z",
      limits: { requestsPerMinute: 30, tokensPerMinute: null },
      budget: { tokens: 1000, period: "day" },
    });
    assert.equal(ruleFieldProblem("30"), undefined);
    assert.equal(ruleFieldProblem(""), undefined);
    assert.equal(ruleFieldProblem("0"), "a whole number from 1, or blank for none");
    assert.equal(ruleFieldProblem("1.5"), "a whole number from 1, or blank for none");
  });

  it("says a key's rules and its use against them", () => {
    const ruled = key({
      expiresAt: "2026-11-27T13:00:30.000Z",
      limits: { requestsPerMinute: 30, tokensPerMinute: 5000 },
      budget: { tokens: 100000, period: "month" },
      usage: { requests: 12, promptTokens: 300, completionTokens: 34, minuteRequests: 3, minuteTokens: 120, budgetTokens: 334 },
    });
    assert.deepEqual(describeRules(ruled, NOW), ["expires in 60 min", "30 RPM", "5,000 TPM", "100,000 tokens / month"]);
    assert.deepEqual(describeUse(ruled), [
      "3/30 requests this minute",
      "120/5,000 tokens this minute",
      "334/100,000 budget tokens",
      "12 requests, 334 tokens in all",
    ]);
    assert.deepEqual(describeRules(key({ expiresAt: "2026-11-27T09:00:00.000Z", budget: { tokens: 10, period: "total" } }), NOW), [
      "expired 3 h ago",
      "10 tokens in all",
    ]);
    assert.deepEqual(describeRules(key(), NOW), []);
  });

  it("fills every bucket of a report's range, for the deployment or one key", () => {
    const bucket = (start: string, keyId: string | null, requests: number, tokens: number): UsageBucket => ({
      start,
      keyId,
      keyPrefix: keyId,
      requests,
      errors: 0,
      errorsByStatus: {},
      promptTokens: tokens,
      completionTokens: 1,
      latencyMs: null,
      timeToFirstTokenMs: null,
    });
    const report: UsageReport = {
      range: "day",
      bucketSeconds: 900,
      from: "2026-11-26T12:15:00.000Z",
      to: "2026-11-27T12:15:00.000Z",
      rows: [
        bucket("2026-11-26T12:15:00.000Z", null, 1, 4),
        bucket("2026-11-26T12:15:00.000Z", "a", 1, 4),
        bucket("2026-11-27T12:00:00.000Z", null, 3, 15),
        bucket("2026-11-27T12:00:00.000Z", "a", 2, 10),
        bucket("2026-11-27T12:00:00.000Z", "b", 1, 5),
      ],
      totals: [],
    };
    const all = usageSeries(report);
    assert.equal(all.length, 96);
    assert.deepEqual(all[0], { start: "2026-11-26T12:15:00.000Z", requests: 1, tokens: 5, errors: 0 });
    assert.deepEqual(all.at(-1), { start: "2026-11-27T12:00:00.000Z", requests: 3, tokens: 16, errors: 0 });
    assert.equal(
      all.reduce((n, b) => n + b.requests, 0),
      4,
    );
    assert.equal(
      usageSeries(report, "b").reduce((n, b) => n + b.requests, 0),
      1,
    );
  });

  it("words errors by status and time percentiles", () => {
    assert.equal(describeErrors({ "500": 1, "429": 3 }), "429 ×3, 500 ×1");
    assert.equal(describeErrors({}), "none");
    assert.equal(describePercentiles({ p50: 120.4, p95: 1340 }), "120 / 1,340 ms");
    assert.equal(describePercentiles(null), "–");
  });
});
