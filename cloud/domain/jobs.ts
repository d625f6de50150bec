/**
 * Jobs and their append-only event log. Each event gets the next `seq` of its job inside the same
 * transaction that stores it, so the SSE `id:` sequence per job is gap-free and monotonic, and an
 * event that was acknowledged (transaction committed) survives a crash.
 */
import type { Job, JobEvent, JobEventType, JobStatus } from "../../sdk/wire.js";
import { TERMINAL_JOB_STATUSES } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { HttpError, notFound } from "../http/errors.js";
import type { JobsTable } from "../store/schema.js";
import { newId, nowIso } from "./ids.js";

export interface CreateJobInput {
  projectId: string;
  name: string;
  config: Record<string, unknown>;
  datasetId?: string | null;
  evalDatasetId?: string | null;
}

export async function createJob(ctx: CloudContext, input: CreateJobInput): Promise<Job> {
  const row: JobsTable = {
    id: newId(),
    project_id: input.projectId,
    name: input.name,
    status: "queued",
    config: JSON.stringify(input.config),
    dataset_id: input.datasetId ?? null,
    eval_dataset_id: input.evalDatasetId ?? null,
    artifact_count: 0,
    error: null,
    last_seq: 0,
    worker_id: null,
    created_at: nowIso(),
    started_at: null,
    finished_at: null,
  };
  await ctx.db.insertInto("jobs").values(row).execute();
  return toJob(row);
}

/** Full list, newest first: the server order the spec asks clients to keep. */
export async function listJobs(ctx: CloudContext, projectId: string): Promise<Job[]> {
  const rows = await ctx.db
    .selectFrom("jobs")
    .selectAll()
    .where("project_id", "=", projectId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map(toJob);
}

export async function findJob(ctx: CloudContext, jobId: string): Promise<JobsTable | undefined> {
  return ctx.db.selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirst();
}

/** The job if it belongs to the project, else 404 (another project's job is indistinguishable from none). */
export async function requireJobInProject(ctx: CloudContext, projectIds: string[], jobId: string): Promise<JobsTable> {
  const row = await findJob(ctx, jobId);
  if (!row || !projectIds.includes(row.project_id)) throw notFound(`job ${jobId}`);
  return row;
}

export const isTerminal = (status: string): boolean => (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);

/** Status change implied by an event type; events of other types leave the status alone. */
const STATUS_AFTER: Partial<Record<JobEventType, JobStatus>> = {
  "training.started": "running",
  "training.completed": "completed",
  "training.failed": "failed",
  "training.cancelled": "cancelled",
};

export type AppendResult = { event: JobEvent; duplicate: false } | { event: null; duplicate: true };

/**
 * Appends one event. With `expectedSeq` (workers number their own events) a replay of an already
 * stored seq is reported as a duplicate instead of being stored twice, and a gap is refused.
 */
export async function appendJobEvent(
  ctx: CloudContext,
  jobId: string,
  type: JobEventType,
  data: Record<string, unknown>,
  expectedSeq?: number,
): Promise<AppendResult> {
  const now = nowIso();
  const result = await ctx.db.transaction().execute(async (trx): Promise<AppendResult> => {
    let update = trx.updateTable("jobs").set((eb) => ({ last_seq: eb("last_seq", "+", 1) })).where("id", "=", jobId);
    if (expectedSeq !== undefined) update = update.where("last_seq", "=", expectedSeq - 1);
    const updated = await update.returning("last_seq").executeTakeFirst();
    if (!updated) {
      const job = await trx.selectFrom("jobs").select("last_seq").where("id", "=", jobId).executeTakeFirst();
      if (!job) throw notFound(`job ${jobId}`);
      if (expectedSeq !== undefined && expectedSeq <= job.last_seq) return { event: null, duplicate: true };
      throw new HttpError(409, "sequence_gap", `event seq ${expectedSeq} does not follow ${job.last_seq}`);
    }
    const seq = Number(updated.last_seq);
    await trx.insertInto("job_events").values({ job_id: jobId, seq, type, data: JSON.stringify(data), created_at: now }).execute();
    const status = STATUS_AFTER[type];
    if (status) {
      await trx
        .updateTable("jobs")
        .set({
          status,
          ...(status === "running" ? { started_at: now } : { finished_at: now }),
          ...(type === "training.completed" && typeof data.artifacts === "number" ? { artifact_count: data.artifacts } : {}),
          ...(type === "training.failed" ? { error: String(data.error ?? "training failed") } : {}),
        })
        .where("id", "=", jobId)
        .execute();
    }
    return { event: { seq, type, data, createdAt: now }, duplicate: false };
  });
  if (result.event) {
    ctx.metrics.eventsAppended.inc({ type });
    ctx.events.publish(jobId, result.event);
  }
  return result;
}

export async function listJobEventsAfter(ctx: CloudContext, jobId: string, afterSeq: number, limit = 1000): Promise<JobEvent[]> {
  const rows = await ctx.db
    .selectFrom("job_events")
    .selectAll()
    .where("job_id", "=", jobId)
    .where("seq", ">", afterSeq)
    .orderBy("seq")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), type: r.type as JobEventType, data: JSON.parse(r.data), createdAt: r.created_at }));
}

export function toJob(row: JobsTable): Job {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    status: row.status as JobStatus,
    config: JSON.parse(row.config),
    artifactCount: Number(row.artifact_count),
    error: row.error,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
