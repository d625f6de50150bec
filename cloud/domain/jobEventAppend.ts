/**
 * Appending job events: the one way a job's events and status change. Events are appended in
 * groups (group commit): one transaction stores every event of a group, and each is reported
 * stored only once that transaction has committed, so an acknowledged event survives a crash
 * while a busy worker link pays one commit per group instead of one per event.
 *
 * Within a group each event is judged on its own, in order, against the job as the events before
 * it in the group left it: one refused event (stale claim, gap, ended job) is reported refused
 * and writes nothing, and the others are stored as if it had never been sent.
 */
import type { JobEvent, JobEventType, JobStatus } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { HttpError, notFound } from "../http/errors.js";
import type { JobsTable } from "../store/schema.js";
import { nowIso } from "./ids.js";
import { bumpJobListVersions } from "./jobListVersion.js";
import { statusAfter } from "./jobState.js";
import { storeSamples } from "./jobSamples.js";

/** Who wrote an event: the cloud itself (cancel, orphan failure), or a worker's claim of the job. */
export type EventOrigin = { kind: "cloud" } | { kind: "worker"; claim: number; seq: number };

export const CLOUD: EventOrigin = { kind: "cloud" };

export type AppendResult = { event: JobEvent; duplicate: false } | { event: null; duplicate: true };

export interface EventToAppend {
  jobId: string;
  type: JobEventType;
  data: Record<string, unknown>;
  origin: EventOrigin;
}

/** What became of one event of a group; `refused` events wrote nothing. */
export type AppendOutcome = { kind: "stored"; event: JobEvent } | { kind: "duplicate" } | { kind: "refused"; error: HttpError };

/** The event or upload came from a claim of the job that is no longer the current one. */
export class StaleClaimError extends HttpError {
  constructor(jobId: string, sent: unknown, current: number) {
    super(409, "stale_claim", `job ${jobId} is held by claim ${current}; claim ${String(sent)} is stale and was refused`);
  }
}

/** Rows per multi-row INSERT: far below SQLite's and PostgreSQL's bound-parameter limits. */
const INSERT_CHUNK = 500;

/** A job row as the group has changed it so far, and the columns to write back at the end. */
interface JobInGroup {
  projectId: string;
  status: JobStatus;
  lastSeq: number;
  claim: number;
  workerSeq: number;
  changes: Partial<JobsTable> | null;
}

/**
 * Appends one event. Every event, cloud-written or not, takes the job's next `seq`
 * (`last_seq + 1`), so the log is one gap-free sequence. A worker's event must carry the current
 * claim (fencing) and its own number, checked against `worker_seq`: a replay of a stored number
 * is reported as a duplicate instead of being stored twice, and a gap is refused. The state
 * machine (`jobState.ts`) refuses events of an ended job. Refusals are thrown.
 */
export async function appendJobEvent(
  ctx: CloudContext,
  jobId: string,
  type: JobEventType,
  data: Record<string, unknown>,
  origin: EventOrigin = CLOUD,
): Promise<AppendResult> {
  const [outcome] = await appendJobEvents(ctx, [{ jobId, type, data, origin }]);
  if (outcome.kind === "refused") throw outcome.error;
  return outcome.kind === "stored" ? { event: outcome.event, duplicate: false } : { event: null, duplicate: true };
}

/**
 * Appends a group of events in one transaction, in the order given, and resolves once it has
 * committed (then the stored ones are published to live readers, in order). Refusals are
 * outcomes, not errors; a store failure rejects and stores none of the group.
 */
export async function appendJobEvents(ctx: CloudContext, items: readonly EventToAppend[]): Promise<AppendOutcome[]> {
  if (items.length === 0) return [];
  const now = nowIso();
  const { outcomes, listVersions } = await ctx.db.transaction().execute(async (trx) => {
    // Sorted, so two groups locking the same jobs on PostgreSQL take the row locks in one order.
    const ids = [...new Set(items.map((item) => item.jobId))].sort();
    let select = trx.selectFrom("jobs").select(["id", "project_id", "status", "last_seq", "claim", "worker_seq"]).where("id", "in", ids).orderBy("id");
    // PostgreSQL: hold the rows until commit so two writers cannot take the same seq. SQLite
    // transactions already run one at a time.
    if (ctx.dialect === "postgres") select = select.forUpdate();
    const jobs = new Map<string, JobInGroup>();
    for (const row of await select.execute()) {
      jobs.set(row.id, {
        projectId: row.project_id,
        status: row.status as JobStatus,
        lastSeq: Number(row.last_seq),
        claim: Number(row.claim),
        workerSeq: Number(row.worker_seq),
        changes: null,
      });
    }
    const rows: { job_id: string; seq: number; type: string; data: string; created_at: string }[] = [];
    const outcomes = items.map((item): AppendOutcome => {
      try {
        const job = jobs.get(item.jobId);
        if (!job) throw notFound(`job ${item.jobId}`);
        const event = applyEvent(job, item, now);
        if (!event) return { kind: "duplicate" };
        rows.push({ job_id: item.jobId, seq: event.seq, type: item.type, data: JSON.stringify(item.data), created_at: now });
        return { kind: "stored", event };
      } catch (err) {
        if (err instanceof HttpError) return { kind: "refused", error: err };
        throw err;
      }
    });
    const listsChanged: string[] = [];
    for (const [id, job] of jobs) {
      if (!job.changes) continue;
      await trx.updateTable("jobs").set(job.changes).where("id", "=", id).execute();
      if (job.changes.status !== undefined) listsChanged.push(job.projectId);
    }
    // After the job rows: every writer locks jobs first, then versions, so none waits in a cycle.
    const listVersions = await bumpJobListVersions(trx, listsChanged);
    for (let i = 0; i < rows.length; i += INSERT_CHUNK)
      await trx
        .insertInto("job_events")
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
    // A step's samples are also kept by step, where custom grades are merged in later (jobSamples.ts).
    for (const row of rows) if (row.type === "samples.graded") await storeSamples(trx, row.job_id, Number(JSON.parse(row.data).step), row.data, now);
    return { outcomes, listVersions };
  });
  // Only after the commit: a live reader must never see an event that could still roll back.
  ctx.jobListChanges.changed(listVersions);
  items.forEach((item, i) => {
    const outcome = outcomes[i];
    if (outcome.kind !== "stored") return;
    ctx.metrics.eventsAppended.inc({ type: item.type });
    ctx.events.publish(item.jobId, outcome.event);
  });
  return outcomes;
}

/**
 * Judges one event against the job as the group left it and, when it is accepted, moves the job
 * on in memory (written back at the end of the group). Returns null for a duplicate; throws an
 * HttpError for a refusal, having changed nothing.
 */
function applyEvent(job: JobInGroup, item: EventToAppend, now: string): JobEvent | null {
  const { jobId, type, data, origin } = item;
  let workerSeq = job.workerSeq;
  if (origin.kind === "worker") {
    if (origin.claim !== job.claim) throw new StaleClaimError(jobId, origin.claim, job.claim);
    if (origin.seq <= workerSeq) return null;
    if (origin.seq !== workerSeq + 1) throw new HttpError(409, "sequence_gap", `event seq ${origin.seq} does not follow ${workerSeq}`);
    workerSeq = origin.seq;
  }
  const current = job.status;
  const status = statusAfter(jobId, current, type);
  const seq = job.lastSeq + 1;
  job.changes = {
    ...job.changes,
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
  };
  job.status = status;
  job.lastSeq = seq;
  job.workerSeq = workerSeq;
  return { seq, type, data, createdAt: now };
}
