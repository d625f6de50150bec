/**
 * A deployment's usage over the last hour, day or month, per key and for the whole deployment, in buckets sized for
 * the range: the sums of the usage rows per key and minute (cloud/edge/usageRecorder.ts) and their detail. Rows are
 * summed in SQL per minute (hour, day) or per UTC day (month), so a month reads at most 30 rows per key.
 */
import { sql } from "kysely";
import type { UsageBucket, UsageRange, UsageReport } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { histogramPercentile } from "./usageHistogram.js";

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** Each range's buckets: how long one is and how many the range holds. */
export const RANGE_BUCKETS: Record<UsageRange, { bucketMs: number; count: number }> = {
  hour: { bucketMs: MINUTE_MS, count: 60 },
  day: { bucketMs: 15 * MINUTE_MS, count: 96 },
  month: { bucketMs: DAY_MS, count: 30 },
};

interface Sums {
  row: UsageBucket;
  latency: Map<number, number>;
  ttft: Map<number, number>;
}

export async function usageReport(ctx: CloudContext, deploymentId: string, range: UsageRange, nowMs = Date.now()): Promise<UsageReport> {
  const { bucketMs, count } = RANGE_BUCKETS[range];
  // Buckets are aligned to UTC (minutes, quarter hours, days); the last one holds now.
  const fromMs = (Math.floor(nowMs / bucketMs) - count + 1) * bucketMs;
  const toMs = fromMs + count * bucketMs;
  const fromMinute = new Date(fromMs).toISOString().slice(0, 16);
  // Grouped by minute, or by UTC day for a month ("2026-11-27").
  const prefix = range === "month" ? 10 : 16;
  const period = sql<string>`substr(minute, 1, ${sql.lit(prefix)})`;
  const totals = await ctx.db
    .selectFrom("deployment_key_usage")
    .select((eb) => [
      "key_id",
      period.as("period"),
      eb.fn.sum<string>("requests").as("requests"),
      eb.fn.sum<string>("errors").as("errors"),
      eb.fn.sum<string>("prompt_tokens").as("prompt"),
      eb.fn.sum<string>("completion_tokens").as("completion"),
    ])
    .where("deployment_id", "=", deploymentId)
    .where("minute", ">=", fromMinute)
    .groupBy(["key_id", period])
    .execute();
  const details = await ctx.db
    .selectFrom("deployment_key_usage_detail")
    .select((eb) => ["key_id", period.as("period"), "metric", "bucket", eb.fn.sum<string>("count").as("count")])
    .where("deployment_id", "=", deploymentId)
    .where("minute", ">=", fromMinute)
    .groupBy(["key_id", period, "metric", "bucket"])
    .execute();
  const keys = await ctx.db.selectFrom("deployment_keys").select(["id", "prefix"]).where("deployment_id", "=", deploymentId).execute();
  const prefixOf = new Map(keys.map((k) => [k.id, k.prefix]));

  const bucketStart = (periodText: string) => {
    const ms = Date.parse(range === "month" ? `${periodText}T00:00:00Z` : `${periodText}:00Z`);
    return new Date(Math.floor(ms / bucketMs) * bucketMs).toISOString();
  };
  const sums = new Map<string, Sums>();
  const sumsOf = (keyId: string | null, start: string) => {
    const id = `${keyId ?? ""} ${start}`;
    let s = sums.get(id);
    if (!s) sums.set(id, (s = { row: emptyBucket(start, keyId, prefixOf), latency: new Map(), ttft: new Map() }));
    return s;
  };
  const fromIso = new Date(fromMs).toISOString();
  const whole = new Map<string, Sums>();
  const wholeOf = (keyId: string | null) => {
    let s = whole.get(keyId ?? "");
    if (!s) whole.set(keyId ?? "", (s = { row: emptyBucket(fromIso, keyId, prefixOf), latency: new Map(), ttft: new Map() }));
    return s;
  };
  // Each row adds to its key's bucket and to the deployment's, and to both over the whole range.
  const targets = (keyId: string, start: string) => [sumsOf(keyId, start), sumsOf(null, start), wholeOf(keyId), wholeOf(null)];
  for (const t of totals) {
    const start = bucketStart(t.period);
    for (const s of targets(t.key_id, start)) {
      s.row.requests += Number(t.requests);
      s.row.errors += Number(t.errors);
      s.row.promptTokens += Number(t.prompt);
      s.row.completionTokens += Number(t.completion);
    }
  }
  for (const d of details) {
    const start = bucketStart(d.period);
    const n = Number(d.count);
    for (const s of targets(d.key_id, start)) {
      if (d.metric === "status") s.row.errorsByStatus[String(d.bucket)] = (s.row.errorsByStatus[String(d.bucket)] ?? 0) + n;
      else {
        const histogram = d.metric === "latency" ? s.latency : s.ttft;
        histogram.set(d.bucket, (histogram.get(d.bucket) ?? 0) + n);
      }
    }
  }
  return {
    range,
    bucketSeconds: bucketMs / 1000,
    from: fromIso,
    to: new Date(toMs).toISOString(),
    rows: finished(sums),
    totals: finished(whole),
  };
}

function emptyBucket(start: string, keyId: string | null, prefixOf: Map<string, string>): UsageBucket {
  return {
    start,
    keyId,
    keyPrefix: keyId === null ? null : (prefixOf.get(keyId) ?? null),
    requests: 0,
    errors: 0,
    errorsByStatus: {},
    promptTokens: 0,
    completionTokens: 0,
    latencyMs: null,
    timeToFirstTokenMs: null,
  };
}

/** Percentiles read from the summed histograms; oldest first, in a bucket the deployment's row, then the keys by prefix. */
function finished(sums: Map<string, Sums>): UsageBucket[] {
  const rows = [...sums.values()].map(({ row, latency, ttft }) => ({ ...row, latencyMs: percentiles(latency), timeToFirstTokenMs: percentiles(ttft) }));
  return rows.sort(
    (a, b) => a.start.localeCompare(b.start) || (a.keyId === null ? -1 : b.keyId === null ? 1 : (a.keyPrefix ?? "").localeCompare(b.keyPrefix ?? "")),
  );
}

function percentiles(histogram: Map<number, number>): UsageBucket["latencyMs"] {
  const p50 = histogramPercentile(histogram, 50);
  const p95 = histogramPercentile(histogram, 95);
  return p50 === null || p95 === null ? null : { p50, p95 };
}
