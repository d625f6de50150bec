/**
 * Usage per key and minute (requests, errors, prompt and completion tokens), added up in memory
 * and written in one transaction per interval, off the request path: a request only adds to a
 * map. Rows older than the retention are deleted once an hour. A kill -9 loses at most the
 * interval not yet written.
 */
import { sql } from "kysely";
import type { CloudContext } from "../context.js";

export const USAGE_RETENTION_DAYS = 32;
const PRUNE_EVERY_MS = 3_600_000;

interface Pending {
  keyId: string;
  deploymentId: string;
  minute: string;
  requests: number;
  errors: number;
  promptTokens: number;
  completionTokens: number;
}

export class UsageRecorder {
  private pending = new Map<string, Pending>();
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

  note(keyId: string, deploymentId: string, usage: { error: boolean; promptTokens: number; completionTokens: number }): void {
    const minute = new Date(this.now()).toISOString().slice(0, 16);
    const id = `${keyId} ${minute}`;
    let row = this.pending.get(id);
    if (!row) this.pending.set(id, (row = { keyId, deploymentId, minute, requests: 0, errors: 0, promptTokens: 0, completionTokens: 0 }));
    row.requests += 1;
    if (usage.error) row.errors += 1;
    row.promptTokens += usage.promptTokens;
    row.completionTokens += usage.completionTokens;
  }

  flush(): Promise<void> {
    if (this.pending.size === 0) return this.flushing;
    const batch = [...this.pending.values()];
    this.pending = new Map();
    const prune = this.now() - this.lastPrune > PRUNE_EVERY_MS;
    if (prune) this.lastPrune = this.now();
    this.flushing = this.flushing
      .then(() =>
        this.ctx.db.transaction().execute(async (trx) => {
          for (const r of batch) {
            await trx
              .insertInto("deployment_key_usage")
              .values({
                key_id: r.keyId,
                deployment_id: r.deploymentId,
                minute: r.minute,
                requests: r.requests,
                errors: r.errors,
                prompt_tokens: r.promptTokens,
                completion_tokens: r.completionTokens,
              })
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
          if (prune) {
            const before = new Date(this.now() - USAGE_RETENTION_DAYS * 86_400_000).toISOString().slice(0, 16);
            await trx.deleteFrom("deployment_key_usage").where("minute", "<", before).execute();
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
