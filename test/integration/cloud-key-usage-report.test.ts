/**
 * Usage reports (issue 28): a key used by the real `openai` client on the real edge and llama.cpp
 * (svc-tiny), streamed and not, refused past its RPM limit (429) and after its expiry (401). The
 * report over the last hour, day and month counts its requests, tokens, errors by status, latency
 * and time to first token in buckets of the range's size; the CSV export carries the same; /metrics
 * labels the key's counters with the deployment and the key's prefix, never the key. Rows older than
 * the hour are written to the store directly, to see which range's buckets they land in.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { CreatedDeploymentKey, Deployment, UsageBucket, UsageReport } from "../../sdk/wire.js";
import { pollUntil } from "../support/poll.js";
import { type Account, http, newAccount } from "../support/api.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { withStore } from "../support/store.js";

const QUESTION = [{ role: "user" as const, content: "What color is milk?" }];
const MINUTE_MS = 60_000;

describe("cloud: usage reports per key and deployment", function () {
  this.timeout(120_000);
  let cloud: TestCloud;
  let account: Account;
  let deployment: Deployment;
  let key: CreatedDeploymentKey;

  before(async () => {
    cloud = await startTestCloud({ env: { SVC_EDGE_USAGE_FLUSH_MS: "100" } });
    account = await newAccount(cloud);
    deployment = await account.client.createDeployment({ slug: "usage-bot", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" });
    key = await account.client.createDeploymentKey(deployment.id, { label: "reporting", limits: { requestsPerMinute: 3, tokensPerMinute: null } });
  });
  after(async () => {
    await cloud?.dispose();
  });

  const keyRow = (report: UsageReport, keyId: string) => report.totals.find((t) => t.keyId === keyId);
  const total = (report: UsageReport) => report.totals.find((t) => t.keyId === null);

  it("reports errors by status, latency and time to first token per key, in the usage API and its CSV", async () => {
    const openai = new OpenAI({ baseURL: `${cloud.edgeUrl}/d/usage-bot/v1`, apiKey: key.key, maxRetries: 0 });
    const statuses = new Map<number, number>();
    const latencies: number[] = [];
    let tokens = 0;
    const seen = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1);
    // Two answers whole, one streamed (its time to first token is before its end).
    for (const stream of [false, true, false]) {
      const started = performance.now();
      if (stream) {
        const chunks = await openai.chat.completions.create({
          model: "x",
          messages: QUESTION,
          max_tokens: 6,
          stream: true,
          stream_options: { include_usage: true },
        });
        for await (const chunk of chunks) if (chunk.usage) tokens += chunk.usage.total_tokens;
      } else {
        tokens += (await openai.chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 6 })).usage!.total_tokens;
      }
      latencies.push(performance.now() - started);
      seen(200);
    }
    const refusal = async () => {
      try {
        await openai.chat.completions.create({ model: "x", messages: QUESTION, max_tokens: 6 });
        return 200;
      } catch (err) {
        assert.ok(err instanceof OpenAI.APIError, String(err));
        return err.status;
      }
    };
    // Past the limit: OpenAI's 429, nothing generated.
    const limited = await refusal();
    assert.equal(limited, 429);
    seen(429);
    // Expired (by a change of its rules): 401 once the edge sees the change (within a second).
    await account.client.updateDeploymentKey(deployment.id, key.id, { expiresAt: new Date(Date.now() - 1000).toISOString() });
    await pollUntil(
      async () => {
        const status = await refusal();
        seen(status);
        return status === 401 || undefined;
      },
      { timeoutMs: 10_000, description: "the expired key refused with 401" },
    );
    const sent = [...statuses.values()].reduce((n, c) => n + c, 0);

    const report = await pollUntil(
      async () => {
        const r = await account.client.getDeploymentUsageReport(deployment.id, "hour");
        return keyRow(r, key.id)?.requests === sent ? r : undefined;
      },
      { timeoutMs: 10_000, description: `${sent} requests in the hour's report` },
    );
    const row = keyRow(report, key.id)!;
    assert.equal(row.keyPrefix, key.prefix);
    assert.deepEqual(row.errorsByStatus, Object.fromEntries([...statuses].filter(([s]) => s >= 400).map(([s, c]) => [String(s), c])));
    assert.equal(row.errors, sent - 3);
    assert.equal(row.promptTokens + row.completionTokens, tokens);
    // Latency of the three answers (refusals are not timed): within the histogram's 5% of what the client saw, plus the client's own overhead.
    assert.ok(row.latencyMs, "latency recorded");
    assert.ok(row.latencyMs.p50 > 0 && row.latencyMs.p50 <= row.latencyMs.p95, JSON.stringify(row.latencyMs));
    assert.ok(row.latencyMs.p95 <= Math.max(...latencies) * 1.05, `p95 ${row.latencyMs.p95} ms, client saw at most ${Math.max(...latencies)} ms`);
    assert.ok(row.timeToFirstTokenMs, "time to first token recorded");
    assert.ok(row.timeToFirstTokenMs.p50 <= row.latencyMs.p95 * 1.05, JSON.stringify(row));
    // The deployment's row sums its keys (one here).
    assert.deepEqual({ ...total(report)!, keyId: key.id, keyPrefix: key.prefix }, row);

    const csv = await http(cloud, "GET", `/v1/deployments/${deployment.id}/usage/hour/export?format=csv`, { token: account.token });
    assert.equal(csv.status, 200, csv.text);
    assert.match(csv.headers.get("content-type") ?? "", /^text\/csv/);
    assert.match(csv.headers.get("content-disposition") ?? "", /filename="usage-usage-bot-hour\.csv"/);
    const [header, ...lines] = csv.text.trim().split("\n");
    assert.equal(
      header,
      "start,key_id,key_prefix,requests,errors,errors_by_status,prompt_tokens,completion_tokens,latency_p50_ms,latency_p95_ms,ttft_p50_ms,ttft_p95_ms",
    );
    const keyLines = lines.map((l) => l.split(",")).filter((cells) => cells[1] === key.id);
    assert.equal(
      keyLines.reduce((n, cells) => n + Number(cells[3]), 0),
      sent,
    );
    const csvStatuses = new Map<string, number>();
    for (const cells of keyLines)
      for (const pair of cells[5].split(" ").filter(Boolean)) {
        const [status, count] = pair.split(":");
        csvStatuses.set(status, (csvStatuses.get(status) ?? 0) + Number(count));
      }
    assert.deepEqual(Object.fromEntries(csvStatuses), row.errorsByStatus);
    assert.ok(
      keyLines.some((cells) => Number(cells[8]) > 0 && Number(cells[10]) > 0),
      `latency and TTFT cells in ${keyLines.join(" | ")}`,
    );
    const json = await http(cloud, "GET", `/v1/deployments/${deployment.id}/usage/hour/export?format=json`, { token: account.token });
    assert.match(json.headers.get("content-disposition") ?? "", /filename="usage-usage-bot-hour\.json"/);
    assert.deepEqual((json.body as UsageReport).totals, report.totals);
    assert.equal((await http(cloud, "GET", `/v1/deployments/${deployment.id}/usage/week`, { token: account.token })).status, 400);

    // /metrics: the key's counters by deployment and prefix; the plaintext never appears.
    const metrics = await (await fetch(`${cloud.cloudUrl}/metrics`)).text();
    for (const [status, count] of statuses)
      assert.match(metrics, new RegExp(`^svc_key_requests_total\\{deployment="usage-bot",key_prefix="${key.prefix}",status="${status}"\\} ${count}$`, "m"));
    assert.match(metrics, new RegExp(`^svc_key_tokens_total\\{deployment="usage-bot",key_prefix="${key.prefix}",kind="completion"\\} \\d+$`, "m"));
    assert.match(metrics, new RegExp(`^svc_key_time_to_first_token_seconds_count\\{deployment="usage-bot",key_prefix="${key.prefix}"\\} 3$`, "m"));
    assert.ok(!metrics.includes(key.key), "the key's plaintext is not in /metrics");
  });

  it("buckets the hour per minute, the day per 15 minutes and the month per UTC day", async () => {
    // An older key's usage written as the recorder writes it: 3 h ago and 10 days ago.
    const archive = await account.client.createDeploymentKey(deployment.id, { label: "archive" });
    const now = Date.now();
    const minuteOf = (ms: number) => new Date(ms).toISOString().slice(0, 16);
    const threeHoursAgo = now - 3 * 60 * MINUTE_MS;
    const tenDaysAgo = now - 10 * 24 * 60 * MINUTE_MS;
    await withStore(cloud, async (db) => {
      for (const [ms, requests] of [
        [threeHoursAgo, 4],
        [tenDaysAgo, 7],
      ])
        await db
          .insertInto("deployment_key_usage")
          .values({
            key_id: archive.id,
            deployment_id: deployment.id,
            minute: minuteOf(ms),
            requests,
            errors: 1,
            prompt_tokens: 10,
            completion_tokens: 5,
          })
          .execute();
      await db
        .insertInto("deployment_key_usage_detail")
        .values({ key_id: archive.id, deployment_id: deployment.id, minute: minuteOf(threeHoursAgo), metric: "status", bucket: 500, count: 1 })
        .execute();
    });
    const floorTo = (ms: number, step: number) => new Date(Math.floor(ms / step) * step).toISOString();
    const checkBuckets = (report: UsageReport, bucketMs: number, count: number) => {
      assert.equal(report.bucketSeconds, bucketMs / 1000);
      assert.equal(Date.parse(report.to) - Date.parse(report.from), count * bucketMs);
      assert.ok(Date.parse(report.to) > Date.now() - 5000 && Date.parse(report.from) <= Date.now() - (count - 1) * bucketMs);
      for (const r of report.rows) {
        assert.equal(Date.parse(r.start) % bucketMs, 0, `${r.start} is on a ${bucketMs} ms boundary`);
        assert.ok(r.start >= report.from && r.start < report.to, `${r.start} in the range`);
      }
    };
    const archived = (report: UsageReport) => report.rows.filter((r: UsageBucket) => r.keyId === archive.id);

    const hour = await account.client.getDeploymentUsageReport(deployment.id, "hour");
    checkBuckets(hour, MINUTE_MS, 60);
    assert.deepEqual(archived(hour), [], "nothing of 3 h ago in the last hour");

    const day = await account.client.getDeploymentUsageReport(deployment.id, "day");
    checkBuckets(day, 15 * MINUTE_MS, 96);
    assert.deepEqual(
      archived(day).map((r) => [r.start, r.requests, r.errorsByStatus]),
      [[floorTo(threeHoursAgo, 15 * MINUTE_MS), 4, { "500": 1 }]],
    );
    // The first test's requests are in the day too, in their quarter hours.
    assert.equal(keyRow(day, key.id)?.requests, keyRow(hour, key.id)?.requests);

    const month = await account.client.getDeploymentUsageReport(deployment.id, "month");
    checkBuckets(month, 24 * 60 * MINUTE_MS, 30);
    assert.equal(month.from.slice(10), "T00:00:00.000Z");
    assert.deepEqual(
      archived(month).map((r) => [r.start, r.requests]),
      [
        [floorTo(tenDaysAgo, 24 * 60 * MINUTE_MS), 7],
        [floorTo(threeHoursAgo, 24 * 60 * MINUTE_MS), 4],
      ].sort(([a], [b]) => String(a).localeCompare(String(b))),
    );
    assert.equal(keyRow(month, archive.id)?.requests, 11);
    assert.equal(total(month)?.requests, 11 + keyRow(hour, key.id)!.requests);
  });
});
