/**
 * The job state machine: the only place that decides whether an event may change a job's status.
 *
 *   queued ──training.started──▶ running ──training.completed──▶ completed
 *     │                            │
 *     └──training.failed / training.cancelled──▶ failed / cancelled
 *
 * Nothing leaves a terminal state, and an ended job takes no further events: a late
 * `training.completed` after a cancel must not turn the job into a completed one. Events that
 * carry no status (logs, progress, checkpoints) are accepted while the job is queued or running.
 */
import type { JobEventType, JobStatus } from "../../sdk/wire.js";
import { TERMINAL_JOB_STATUSES } from "../../sdk/wire.js";
import { HttpError } from "../http/errors.js";

export const isTerminal = (status: string): boolean => (TERMINAL_JOB_STATUSES as readonly string[]).includes(status);

/** The status an event moves a job to; events of other types leave the status alone. */
const STATUS_AFTER: Partial<Record<JobEventType, JobStatus>> = {
  "training.started": "running",
  "training.completed": "completed",
  "training.failed": "failed",
  "training.cancelled": "cancelled",
};

/** Allowed moves; a status not listed as a key is terminal. */
const TRANSITIONS: Partial<Record<JobStatus, readonly JobStatus[]>> = {
  queued: ["running", "failed", "cancelled"],
  running: ["completed", "failed", "cancelled"],
};

/** The event came for a job that has already ended; the sender should stop working on it. */
export class JobEndedError extends HttpError {
  constructor(jobId: string, status: string, type: string) {
    super(409, "job_ended", `job ${jobId} has already ended (${status}); the ${type} event was refused`);
  }
}

/**
 * The status after `type` is applied to a job in `status`: unchanged for events without a
 * status; throws JobEndedError for any event of an ended job and 409 for a move the machine
 * does not have (say `training.completed` for a job that never started).
 */
export function statusAfter(jobId: string, status: JobStatus, type: JobEventType): JobStatus {
  if (isTerminal(status)) throw new JobEndedError(jobId, status, type);
  const next = STATUS_AFTER[type];
  if (!next) return status;
  if (!(TRANSITIONS[status] ?? []).includes(next)) {
    throw new HttpError(409, "invalid_transition", `job ${jobId} is ${status}; a ${type} event cannot move it to ${next}`);
  }
  return next;
}
