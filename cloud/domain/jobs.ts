/**
 * Jobs and their append-only event log. Each event gets the next `seq` of its job inside the same
 * transaction that stores it (and that moves the job's status through `jobState.ts`), so the SSE
 * `id:` sequence per job is gap-free and monotonic, and an event that was acknowledged
 * (transaction committed) survives a crash. Appending lives in `jobEventAppend.ts`.
 */
import type { Job, JobEvent, JobEventType, JobStatus } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { HttpError, notFound } from "../http/errors.js";
import type { JobsTable } from "../store/schema.js";
import { newId, nowIso } from "./ids.js";
import { appendJobEvent, StaleClaimError } from "./jobEventAppend.js";
import { bumpJobListVersions } from "./jobListVersion.js";
import { isTerminal, JobEndedError } from "./jobState.js";

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
    claim: 0,
    worker_seq: 0,
    created_at: nowIso(),
    started_at: null,
    finished_at: null,
  };
  const versions = await ctx.db.transaction().execute(async (trx) => {
    await trx.insertInto("jobs").values(row).execute();
    return bumpJobListVersions(trx, [row.project_id]);
  });
  ctx.jobListChanges.changed(versions);
  return toJob(row);
}

/** Full list, newest first: the server order the spec asks clients to keep. */
export async function listJobs(ctx: CloudContext, projectId: string): Promise<Job[]> {
  const rows = await ctx.db.selectFrom("jobs").selectAll().where("project_id", "=", projectId).orderBy("created_at", "desc").orderBy("id", "desc").execute();
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

export { isTerminal } from "./jobState.js";

export { appendJobEvent, appendJobEvents, CLOUD, StaleClaimError } from "./jobEventAppend.js";
export type { AppendOutcome, AppendResult, EventOrigin, EventToAppend } from "./jobEventAppend.js";

/**
 * Ends a job that has not ended, by the cloud's own `training.cancelled` event: cancel must end a
 * job even when its worker is gone or wedged. Returns false when the job had already ended.
 */
export async function cancelJob(ctx: CloudContext, jobId: string, reason = "cancelled by user"): Promise<boolean> {
  try {
    await appendJobEvent(ctx, jobId, "training.cancelled", { reason });
    return true;
  } catch (err) {
    if (err instanceof JobEndedError) return false;
    throw err;
  }
}

/** Refuses work (an artifact upload) from any but the current claim of a job that is still live. */
export async function requireCurrentClaim(ctx: CloudContext, jobId: string, claim: number): Promise<JobsTable> {
  const job = await findJob(ctx, jobId);
  if (!job) throw notFound(`job ${jobId}`);
  if (claim !== Number(job.claim)) throw new StaleClaimError(jobId, claim, Number(job.claim));
  if (isTerminal(job.status)) throw new HttpError(409, "job_ended", `job ${jobId} has already ended (${job.status}); the upload was refused`);
  return job;
}

/**
 * Claims the oldest queued, unclaimed job for a worker: sets its worker and the next fencing
 * number, and restarts the worker's numbering. On PostgreSQL, where several cloud instances claim
 * at once, `FOR UPDATE SKIP LOCKED` hands each its own job without waiting on the others' row
 * locks; on SQLite (one writer) the conditional update alone makes one claim win.
 */
export async function claimNextJob(ctx: CloudContext, workerId: string): Promise<JobsTable | null> {
  if (ctx.dialect === "postgres") return claimNextJobSkipLocked(ctx, workerId);
  for (let attempt = 0; attempt < 5; attempt++) {
    const candidate = await ctx.db
      .selectFrom("jobs")
      .selectAll()
      .where("status", "=", "queued")
      .where("worker_id", "is", null)
      .orderBy("created_at")
      .limit(1)
      .executeTakeFirst();
    if (!candidate) return null;
    const claim = Number(candidate.claim) + 1;
    const claimed = await ctx.db
      .updateTable("jobs")
      .set({ worker_id: workerId, claim, worker_seq: 0 })
      .where("id", "=", candidate.id)
      .where("worker_id", "is", null)
      .where("status", "=", "queued")
      .where("claim", "=", candidate.claim)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) === 1) return { ...candidate, worker_id: workerId, claim, worker_seq: 0 };
  }
  return null;
}

async function claimNextJobSkipLocked(ctx: CloudContext, workerId: string): Promise<JobsTable | null> {
  const claimed = await ctx.db
    .updateTable("jobs")
    .set((eb) => ({ worker_id: workerId, claim: eb("claim", "+", 1), worker_seq: 0 }))
    .where("id", "=", (eb) =>
      eb.selectFrom("jobs").select("id").where("status", "=", "queued").where("worker_id", "is", null).orderBy("created_at").limit(1).forUpdate().skipLocked(),
    )
    .returningAll()
    .executeTakeFirst();
  return claimed ? { ...claimed, claim: Number(claimed.claim), worker_seq: 0 } : null;
}

/**
 * Puts a claimed job that never started back in the queue: its assignment never reached a worker
 * (the link closed before it went out) or its worker vanished before saying it started. Only that
 * claim of a still-queued job is released (a conditional update, so on either store it cannot undo
 * a newer claim or a start). The fencing number moves on at once, so whatever the old claim still
 * sends (an assignment that did arrive after all) is refused as stale. Returns whether it was released.
 */
export async function releaseClaim(ctx: CloudContext, jobId: string, claim: number): Promise<boolean> {
  const released = await ctx.db
    .updateTable("jobs")
    .set((eb) => ({ worker_id: null, claim: eb("claim", "+", 1) }))
    .where("id", "=", jobId)
    .where("claim", "=", claim)
    .where("status", "=", "queued")
    .where("worker_id", "is not", null)
    .executeTakeFirst();
  return Number(released.numUpdatedRows) === 1;
}

export async function listJobEventsAfter(ctx: CloudContext, jobId: string, afterSeq: number, limit = 1000): Promise<JobEvent[]> {
  const rows = await ctx.db.selectFrom("job_events").selectAll().where("job_id", "=", jobId).where("seq", ">", afterSeq).orderBy("seq").limit(limit).execute();
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
