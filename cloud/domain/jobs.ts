/**
 * Jobs and their append-only event log. Each event gets the next `seq` of its job inside the same
 * transaction that stores it (and that moves the job's status through `jobState.ts`), so the SSE
 * `id:` sequence per job is gap-free and monotonic, and an event that was acknowledged
 * (transaction committed) survives a crash.
 */
import type { Job, JobEvent, JobEventType, JobStatus } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { HttpError, notFound } from "../http/errors.js";
import type { JobsTable } from "../store/schema.js";
import { newId, nowIso } from "./ids.js";
import { isTerminal, JobEndedError, statusAfter } from "./jobState.js";

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

export { isTerminal } from "./jobState.js";

/** Who wrote an event: the cloud itself (cancel, orphan failure), or a worker's claim of the job. */
export type EventOrigin = { kind: "cloud" } | { kind: "worker"; claim: number; seq: number };

export const CLOUD: EventOrigin = { kind: "cloud" };

export type AppendResult = { event: JobEvent; duplicate: false } | { event: null; duplicate: true };

/** The event or upload came from a claim of the job that is no longer the current one. */
export class StaleClaimError extends HttpError {
  constructor(jobId: string, sent: unknown, current: number) {
    super(409, "stale_claim", `job ${jobId} is held by claim ${current}; claim ${String(sent)} is stale and was refused`);
  }
}

/**
 * Appends one event: the one way a job's events and status change. Every event, cloud-written or
 * not, takes the job's next `seq` (`last_seq + 1`), so the log is one gap-free sequence. A
 * worker's event must carry the current claim (fencing) and its own number, checked against
 * `worker_seq`: a replay of a stored number is reported as a duplicate instead of being stored
 * twice, and a gap is refused. The state machine (`jobState.ts`) refuses events of an ended job.
 */
export async function appendJobEvent(
  ctx: CloudContext,
  jobId: string,
  type: JobEventType,
  data: Record<string, unknown>,
  origin: EventOrigin = CLOUD,
): Promise<AppendResult> {
  const now = nowIso();
  const result = await ctx.db.transaction().execute(async (trx): Promise<AppendResult> => {
    let select = trx.selectFrom("jobs").select(["status", "last_seq", "claim", "worker_seq"]).where("id", "=", jobId);
    // PostgreSQL: hold the row until commit so two writers cannot take the same seq. SQLite
    // transactions already run one at a time.
    if (ctx.dialect === "postgres") select = select.forUpdate();
    const job = await select.executeTakeFirst();
    if (!job) throw notFound(`job ${jobId}`);
    let workerSeq = Number(job.worker_seq);
    if (origin.kind === "worker") {
      if (origin.claim !== Number(job.claim)) throw new StaleClaimError(jobId, origin.claim, Number(job.claim));
      if (origin.seq <= workerSeq) return { event: null, duplicate: true };
      if (origin.seq !== workerSeq + 1) throw new HttpError(409, "sequence_gap", `event seq ${origin.seq} does not follow ${workerSeq}`);
      workerSeq = origin.seq;
    }
    const current = job.status as JobStatus;
    const status = statusAfter(jobId, current, type);
    const seq = Number(job.last_seq) + 1;
    await trx
      .updateTable("jobs")
      .set({
        last_seq: seq,
        worker_seq: workerSeq,
        ...(status !== current
          ? {
              status,
              ...(status === "running" ? { started_at: now } : { finished_at: now }),
              ...(type === "training.completed" && typeof data.artifacts === "number" ? { artifact_count: data.artifacts } : {}),
              ...(type === "training.failed" ? { error: String(data.error ?? "training failed") } : {}),
            }
          : {}),
      })
      .where("id", "=", jobId)
      .execute();
    await trx.insertInto("job_events").values({ job_id: jobId, seq, type, data: JSON.stringify(data), created_at: now }).execute();
    return { event: { seq, type, data, createdAt: now }, duplicate: false };
  });
  if (result.event) {
    ctx.metrics.eventsAppended.inc({ type });
    ctx.events.publish(jobId, result.event);
  }
  return result;
}

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
 * number, and restarts the worker's numbering. The conditional update makes one claim win when
 * several cloud instances race on PostgreSQL.
 */
export async function claimNextJob(ctx: CloudContext, workerId: string): Promise<JobsTable | null> {
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
