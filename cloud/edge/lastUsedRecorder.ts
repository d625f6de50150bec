/**
 * `lastUsedAt` of deployment keys, written best-effort in batches: requests only note the key
 * in memory, and a timer writes all noted keys once per interval, off the request path.
 */
import type { CloudContext } from "../context.js";
import { nowIso } from "../domain/ids.js";

export class LastUsedRecorder {
  private noted = new Map<string, string>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: CloudContext,
    intervalMs: number,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  note(keyId: string): void {
    this.noted.set(keyId, nowIso());
  }

  flush(): Promise<void> {
    if (this.noted.size === 0) return this.flushing;
    const batch = this.noted;
    this.noted = new Map();
    this.flushing = this.flushing
      .then(() =>
        this.ctx.db.transaction().execute(async (trx) => {
          for (const [id, at] of batch) await trx.updateTable("deployment_keys").set({ last_used_at: at }).where("id", "=", id).execute();
        }),
      )
      // Best effort by design: a lost batch only makes lastUsedAt a little older.
      .catch(() => undefined);
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
