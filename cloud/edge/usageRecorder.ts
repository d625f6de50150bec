/**
 * Usage per key and minute (requests, errors, prompt and completion tokens; answers of status 400 and up per status;
 * histograms of latency and time to first token), added up in memory and written in one transaction per interval,
 * off the request path: a request only adds to maps. Rows older than the retention are deleted once an hour. A
 * kill -9 loses at most the interval not yet written.
 */
import { sql } from "kysely";
import type { CloudContext } from "../context.js";
import { latencyBucket } from "../domain/usageHistogram.js";
import type { UsageDetailMetric } from "../store/schema.js";

export const USAGE_RETENTION_DAYS = 32;
const PRUNE_EVERY_MS = 3_600_000;
/** Rows per INSERT: well under SQLite's bound on a statement's variables. */
const ROWS_PER_INSERT = 200;

/** What one answer of a key cost and how it went. */
export interface UsageNote {
  status: number;
  promptTokens: number;
  completionTokens: number;
  /** To the answer's last byte; null for a request refused before anything ran (no latency worth charting). */
  latencyMs: number | null;
  /** To its first generated text; null when it generated none. */
  timeToFirstTokenMs: number | null;
}

interface Pending {
  keyId: string;
  deploymentId: string;
  minute: string;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
}

interface PendingDetail {
  keyId: string;
  deploymentId: string;
  minute: string;
  metric: UsageDetailMetric;
  bucket: number;
  count: number;
}

export class UsageRecorder {
  private pending = new Map<string, Pending>();
  private details = new Map<string, PendingDetail>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();
  private lastPrune = 0;

  constructor(
    private readonly ctx: CloudContext,
    intervalMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  note(keyId: string, deploymentId: string, usage: UsageNote): void {
    const minute = new Date(this.now()).toISOString().slice(0, 16);
    const id = `${keyId} ${minute}`;
    let row = this.pending.get(id);
    if (!row) this.pending.set(id, (row = { keyId, deploymentId, minute, requests: 0, errors: 0, promptTokens: 0, completionTokens: 0 }));
    row.requests += 1;
    row.promptTokens += usage.promptTokens;
    row.completionTokens += usage.completionTokens;
    if (usage.status >= 400) {
      row.errors += 1;
      this.count(id, row, "status", usage.status);
    }
    if (usage.latencyMs !== null) this.count(id, row, "latency", latencyBucket(usage.latencyMs));
    if (usage.timeToFirstTokenMs !== null) this.count(id, row, "ttft", latencyBucket(usage.timeToFirstTokenMs));
  }

  private count(id: string, row: Pending, metric: UsageDetailMetric, bucket: number): void {
    const detailId = `${id} ${metric} ${bucket}`;
    const detail = this.details.get(detailId);
    if (detail) detail.count += 1;
    else this.details.set(detailId, { keyId: row.keyId, deploymentId: row.deploymentId, minute: row.minute, metric, bucket, count: 1 });
  }

  flush(): Promise<void> {
    if (this.pending.size === 0) return this.flushing;
    const batch = [...this.pending.values()];
    const details = [...this.details.values()];
    this.pending = new Map();
    this.details = new Map();
    const prune = this.now() - this.lastPrune > PRUNE_EVERY_MS;
    if (prune) this.lastPrune = this.now();
    this.flushing = this.flushing
      .then(() =>
        // One transaction: a batch's totals and its detail are written together or not at all.
        this.ctx.db.transaction().execute(async (trx) => {
          for (let i = 0; i < batch.length; i += ROWS_PER_INSERT) {
            await trx
              .insertInto("deployment_key_usage")
              .values(
                batch.slice(i, i + ROWS_PER_INSERT).map((r) => ({
                  key_id: r.keyId,
                  deployment_id: r.deploymentId,
                  minute: r.minute,
                  requests: r.requests,
                  errors: r.errors,
                  prompt_tokens: r.promptTokens,
                  completion_tokens: r.completionTokens,
                })),
              )
              .onConflict((oc) =>
                oc.columns(["key_id", "minute"]).doUpdateSet({
                  requests: sql`deployment_key_usage.requests + excluded.requests`,
                  errors: sql`deployment_key_usage.errors + excluded.errors`,
                  prompt_tokens: sql`deployment_key_usage.prompt_tokens + excluded.prompt_tokens`,
                  completion_tokens: sql`deployment_key_usage.completion_tokens + excluded.completion_tokens`,
                }),
              )
              .execute();
          }
          for (let i = 0; i < details.length; i += ROWS_PER_INSERT) {
            await trx
              .insertInto("deployment_key_usage_detail")
              .values(
                details.slice(i, i + ROWS_PER_INSERT).map((d) => ({
                  key_id: d.keyId,
                  deployment_id: d.deploymentId,
                  minute: d.minute,
                  metric: d.metric,
                  bucket: d.bucket,
                  count: d.count,
                })),
              )
              .onConflict((oc) =>
                oc.columns(["key_id", "minute", "metric", "bucket"]).doUpdateSet({ count: sql`deployment_key_usage_detail.count + excluded.count` }),
              )
              .execute();
          }
          if (prune) {
            const before = new Date(this.now() - USAGE_RETENTION_DAYS * 86_400_000).toISOString().slice(0, 16);
            await trx.deleteFrom("deployment_key_usage").where("minute", "<", before).execute();
            await trx.deleteFrom("deployment_key_usage_detail").where("minute", "<", before).execute();
          }
        }),
      )
      // Best effort: a lost batch is usage not shown, never a request refused.
      .catch(() => undefined);
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
