/**
 * Facts about a job derived from its own fields, for the Job detail sidebar and the compare view:
 * how long it ran and which base model it trained. No extra API call: `startedAt`, `finishedAt`
 * and `config.model` come with every `Job`.
 */
import type { Job } from "../sdk/wire.js";
import { formatDuration } from "./format.js";

/**
 * Training time: from `startedAt` to `finishedAt`, or to `now` while the job runs (the view ticks).
 * Undefined before the job started, or for a job that ended without starting (cancelled while queued).
 */
export function jobDurationMs(job: Pick<Job, "status" | "startedAt" | "finishedAt">, now: number = Date.now()): number | undefined {
  const started = job.startedAt ? Date.parse(job.startedAt) : NaN;
  if (Number.isNaN(started)) return undefined;
  const finished = job.finishedAt ? Date.parse(job.finishedAt) : NaN;
  if (!Number.isNaN(finished)) return Math.max(0, finished - started);
  return job.status === "running" ? Math.max(0, now - started) : undefined;
}

/** The Duration row: `3 min 12 s`, `12 s so far` while running, `—` when there is none. */
export function jobDurationText(job: Pick<Job, "status" | "startedAt" | "finishedAt"> | undefined, now: number = Date.now()): string {
  const ms = job && jobDurationMs(job, now);
  if (ms === undefined) return "—";
  return job!.finishedAt ? formatDuration(ms) : `${formatDuration(ms)} so far`;
}

/** The base model the job trains (`config.model`, as given to createTrainer), when it is a string. */
export function baseModelOf(job: Pick<Job, "config"> | undefined): string | undefined {
  const model = job?.config?.model;
  return typeof model === "string" && model !== "" ? model : undefined;
}

/** "Open in Playground" is offered for completed jobs: only they have a final adapter to chat with. */
export function hasPlaygroundAdapter(status: Job["status"] | undefined): boolean {
  return status === "completed";
}
