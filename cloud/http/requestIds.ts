/**
 * Request ids: every response of both listeners carries `x-request-id`, the id the logs and the
 * control plane's error envelope use. A caller's own `x-request-id` is kept when it is a sane
 * token (so a client can correlate its logs with ours, as vLLM allows); anything else gets ours.
 * Ours are a per-process random prefix and a counter: unique and cheap on the hot path.
 */
import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { REQUEST_ID_HEADER } from "../../server-shared/frameworkErrors.js";

export { REQUEST_ID_HEADER };
const CALLER_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const prefix = `req_${randomBytes(6).toString("hex")}`;
let counter = 0;

export function requestId(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  if (typeof given === "string" && CALLER_ID.test(given)) return given;
  return newRequestId();
}

/** One of ours, for an answer that has no request to read a caller's id from (the HTTP parser refused it). */
export function newRequestId(): string {
  counter += 1;
  return `${prefix}${counter.toString(36).padStart(6, "0")}`;
}
