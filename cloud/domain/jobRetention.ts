/**
 * Retention of finished jobs (`svc cloud serve --retain-jobs 30d`, or SVC_RETAIN_JOBS): a job that
 * ended longer ago than the setting is deleted with its events, artifacts and the datasets only it
 * used (jobDeletion.ts). A job a deployment serves is kept, however old. The sweep runs when the
 * cloud starts and then every hour; it reads the end time from the store, so a job's age is what
 * the store says, whichever instance sweeps.
 */
import type { CloudContext } from "../context.js";
import { HttpError } from "../http/errors.js";
import { TERMINAL_JOB_STATUSES } from "../../sdk/wire.js";
import { deleteJob } from "./jobDeletion.js";

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

/** Parses a retention such as `30d`, `12h`, `2w` or `90m` to milliseconds; throws a readable error otherwise. */
export function parseRetention(value: string): number {
  const match = /^(\d+)\s*([mhdw])$/.exec(value.trim());
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]] : NaN;
  if (!Number.isSafeInteger(ms) || ms <= 0) {
    throw new Error(`job retention "${value}" is not a duration: write a positive number and a unit, m, h, d or w (e.g. 30d)`);
  }
  return ms;
}

/** Deletes the finished jobs that ended before `now - retainMs` and no deployment serves; returns their ids. */
export async function deleteExpiredJobs(ctx: CloudContext, retainMs: number, now = Date.now()): Promise<string[]> {
  const cutoff = new Date(now - retainMs).toISOString();
  const expired = await ctx.db
    .selectFrom("jobs")
    .select("id")
    .where("status", "in", [...TERMINAL_JOB_STATUSES])
    .where("finished_at", "is not", null)
    .where("finished_at", "<", cutoff)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("deployments").select("deployments.id").whereRef("deployments.target_job_id", "=", "jobs.id").where("deployments.deleted_at", "is", null),
        ),
      ),
    )
    .orderBy("finished_at")
    .execute();
  const deleted: string[] = [];
  for (const { id } of expired) {
    try {
      await deleteJob(ctx, id);
      deleted.push(id);
    } catch (err) {
      // Deployed since the query: kept, as it should be; the next sweep looks again.
      if (!(err instanceof HttpError && err.status === 409)) throw err;
    }
  }
  return deleted;
}

/** Sweeps now and then every `everyMs`; a failed sweep is logged and the next one tries again. `stop` waits for a sweep in progress. */
export function startJobRetention(ctx: CloudContext, retainMs: number, log: (line: string) => void, everyMs = 3_600_000): { stop(): Promise<void> } {
  let running: Promise<void> | null = null;
  const sweep = () => {
    running ??= deleteExpiredJobs(ctx, retainMs)
      .then((ids) => {
        if (ids.length > 0) log(`deleted ${ids.length} finished job${ids.length === 1 ? "" : "s"} older than the retention setting`);
      })
      .catch((err: unknown) => log(`job retention sweep failed (will retry): ${err instanceof Error ? err.message : String(err)}`))
      .finally(() => (running = null));
  };
  sweep();
  const timer = setInterval(sweep, everyMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
