/**
 * What the job event relay answers while the cloud is unreachable or failing (a restart, a crash).
 *
 * EventSource reconnects by itself only after a network break or a 200 event stream that ends; an
 * HTTP error status (a 502, say) makes it give up for good, and the job page would stay "running"
 * with the interrupted banner forever. So a transient upstream failure
 * is answered as an empty 200 event stream carrying a `retry:` delay: the browser shows its banner,
 * waits, and reconnects with the same `Last-Event-ID` until the cloud is back and the stream goes
 * on (or sends `end`). Errors that retrying cannot fix (404 unknown job, 401, 403) keep their status.
 */
import type { FastifyReply } from "fastify";
import { ApiError, ConnectionError } from "../sdk/errors.js";
import { writeEventStreamHead } from "../server-shared/eventStream.js";

/** Reconnect delay the browser is told to use; loopback, so a second costs nothing. */
export const STREAM_RETRY_MS = 1000;

/** A failure of the cloud itself (unreachable, 5xx), which a later reconnect may not meet. */
export function isTransientUpstreamError(err: unknown): boolean {
  return err instanceof ConnectionError || (err instanceof ApiError && err.status >= 500);
}

/** Ends the request with an event stream that only says "retry in STREAM_RETRY_MS" and why. */
export function answerRetryLater(reply: FastifyReply, reason: string): void {
  reply.hijack();
  const res = reply.raw;
  writeEventStreamHead(res);
  // A comment line is ignored by EventSource; it tells a human reading the stream what happened.
  res.end(`retry: ${STREAM_RETRY_MS}\n: ${reason.replace(/[\r\n]+/g, " ")}\n\n`);
}
