/**
 * Job event stream semantics of the job detail view (SPEC sections 3 and 6): the log message of
 * each event, the bounded log, and the job-status reducer.
 */
import type { JobStatus } from "../sdk/wire.js";
import { logMessage as sharedLogMessage } from "../sdk/logMessage.js";

/** Named SSE events of `GET /api/jobs/:id/events` that carry a payload. */
export const JOB_EVENT_TYPES = [
  "training.started",
  "training.log",
  "training.progress",
  "checkpoint.saved",
  "samples.graded",
  "training.completed",
  "training.failed",
  "training.cancelled",
] as const;
export type JobStreamEventType = (typeof JOB_EVENT_TYPES)[number];

/** One frame of the job event stream as the view receives it from either transport. */
export interface JobStreamEvent {
  /** SSE `id:` (the cloud's sequence number), used as the log row key. */
  id: string;
  type: JobStreamEventType;
  /**
   * The `data:` line exactly as received, for a named frame: training.started logs it verbatim.
   * Events decoded from a `batch` frame leave it out when their payload is an object (it is then
   * `JSON.stringify(data)`, the cloud's own encoding), so opening a 100,000-event job does not
   * re-serialise 100,000 payloads of which at most 500 are ever logged.
   */
  raw?: string;
  /** `raw` parsed; an empty object if it was not a JSON object. */
  data: Record<string, unknown>;
}

export interface LogEntry {
  id: string;
  type: JobStreamEventType;
  message: string;
}

/** SPEC section 8: the job view keeps the last 500 log entries. */
export const EVENT_LOG_LIMIT = 500;

export function parseEventData(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function isNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value);
}

/** Loss values in the log use four decimals: `step=10 loss=2.3100`. */
export function formatLossValue(value: number): string {
  return value.toFixed(4);
}

/** A token accuracy (0 to 1) as a percentage with one decimal: `83.3%`. */
export function formatAccuracy(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/**
 * The log message of one frame. The wording is shared with `svc start` (sdk/logMessage.ts), so
 * the terminal and the studio read the same; the view logs training.started's payload verbatim.
 */
export function logMessage(event: Pick<JobStreamEvent, "type" | "raw" | "data">): string {
  if (event.type === "training.started") return rawText(event);
  if (event.type === "training.failed" && typeof event.data.error !== "string") return rawText(event);
  return sharedLogMessage(event.type, event.data);
}

/** The payload's text as sent: `raw` when the frame carried it, else the JSON the cloud wrote. */
export function rawText(event: Pick<JobStreamEvent, "raw" | "data">): string {
  return event.raw ?? JSON.stringify(event.data);
}

/** Returns a new array (so Svelte sees the change) holding at most `limit` newest entries. */
export function appendBounded<T>(entries: readonly T[], entry: T, limit = EVENT_LOG_LIMIT): T[] {
  const next = entries.length >= limit ? entries.slice(entries.length - limit + 1) : entries.slice();
  next.push(entry);
  return next;
}

/**
 * Job status as shown in the job detail view. The stream replays from the first event, so every
 * transition applies from any state (a replayed `training.started` after a terminal event cannot occur).
 */
export function reduceJobStatus(status: JobStatus, type: JobStreamEventType): JobStatus {
  switch (type) {
    case "training.started":
      return "running";
    case "training.completed":
      return "completed";
    case "training.failed":
      return "failed";
    case "training.cancelled":
      return "cancelled";
    default:
      return status;
  }
}
