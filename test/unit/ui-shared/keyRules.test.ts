/** Key rules in words, the issue form read into rules, and usage per minute (issue 28). */
import assert from "node:assert/strict";
import type { DeploymentKey, UsageRow } from "../../../sdk/wire.js";
import { describeRules, describeUse, ruleFieldProblem, rulesFromForm, usageSeries } from "../../../ui-shared/keyRules.js";

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

  it("sums usage per minute over the last hour, for all keys or one", () => {
    const row = (keyId: string, minute: string, requests: number, tokens: number): UsageRow => ({
      keyId,
      keyPrefix: "p",
      minute,
      requests,
      errors: 0,
      promptTokens: tokens,
      completionTokens: 1,
    });
    const rows = [
      row("a", "2026-11-27T12:00", 2, 10),
      row("b", "2026-11-27T12:00", 1, 5),
      row("a", "2026-11-27T11:59", 1, 4),
      row("a", "2026-11-27T10:00", 9, 9),
    ];
    const all = usageSeries(rows, "hour", NOW);
    assert.equal(all.length, 60);
    assert.deepEqual(all.at(-1), { minute: "2026-11-27T12:00", requests: 3, tokens: 17 });
    assert.deepEqual(all.at(-2), { minute: "2026-11-27T11:59", requests: 1, tokens: 5 });
    assert.equal(
      all.reduce((n, b) => n + b.requests, 0),
      4,
      "the row of 10:00 is outside the hour",
    );
    assert.equal(
      usageSeries(rows, "hour", NOW, "b").reduce((n, b) => n + b.requests, 0),
      1,
    );
    const day = usageSeries(rows, "day", NOW);
    assert.equal(day.length, 48);
    assert.equal(
      day.reduce((n, b) => n + b.requests, 0),
      13,
    );
  });
});
