/**
 * Reads a job's event stream as an async iterator and resumes after a dropped connection with
 * `Last-Event-ID` (sdk/eventStreamReader.ts), so the caller sees every event exactly once, in
 * order, until `end`.
 */
import { readEventStream } from "./eventStreamReader.js";
import type { JobEvent, JobEventType } from "./wire.js";

export interface EventStreamOptions {
  /** Resume after this seq (0 = from the start). */
  lastEventId?: number;
  signal?: AbortSignal;
  /** Reconnect attempts in a row without receiving anything before giving up. */
  maxRetries?: number;
}

export type OpenStream = (lastEventId: number, signal: AbortSignal) => Promise<Response>;

export async function* readJobEvents(open: OpenStream, options: EventStreamOptions = {}): AsyncGenerator<JobEvent> {
  let cursor = options.lastEventId ?? 0;
  const messages = readEventStream((lastEventId, signal) => open(Number(lastEventId ?? 0), signal), {
    signal: options.signal,
    lastEventId: cursor > 0 ? String(cursor) : undefined,
    maxRetries: options.maxRetries ?? 8,
    retryDelayMs: (failures) => Math.min(250 * 2 ** failures, 5000),
  });
  for await (const message of messages) {
    const seq = Number(message.id);
    if (!Number.isFinite(seq) || seq <= cursor) continue; // never yield a duplicate
    cursor = seq;
    yield { seq, type: message.event as JobEventType, data: JSON.parse(message.data), createdAt: "" };
  }
}
