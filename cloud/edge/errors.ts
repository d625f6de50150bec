/**
 * The edge's error format is OpenAI's, `{"error":{"message","type","param","code"}}`, on every
 * failure: our own, Fastify's (bad JSON, body too large) and unknown routes, so any OpenAI SDK
 * shows the message. The control plane's envelope (cloud/http/errors.ts) is not used here.
 */
import { drainRequestBody } from "../http/drain.js";
import type { FastifyError, FastifyInstance, FastifyReply } from "fastify";
import { InferenceError } from "../inference/types.js";

export class EdgeError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | null,
    message: string,
    readonly param: string | null = null,
    readonly retryAfter?: number,
    /** OpenAI's `type` when it is not the status's usual one (`insufficient_quota`, `requests`, `tokens`). */
    readonly type?: string,
    /** More response headers (the x-ratelimit-* of a refused key). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }
}

export const edgeNotFound = (message: string) => new EdgeError(404, "not_found", message);

function errorType(status: number): string {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

export function sendEdgeError(reply: FastifyReply, error: EdgeError): FastifyReply {
  if (error.retryAfter !== undefined) void reply.header("retry-after", String(error.retryAfter));
  for (const [name, value] of Object.entries(error.headers ?? {})) void reply.header(name, value);
  return reply
    .status(error.status)
    .header("cache-control", "no-store")
    .send({ error: { message: error.message, type: error.type ?? errorType(error.status), param: error.param, code: error.code } });
}

export function toEdgeError(err: unknown): EdgeError {
  if (err instanceof EdgeError) return err;
  if (err instanceof InferenceError) {
    // 499: the client left; nobody reads the answer, but keep it out of the 5xx statistics.
    return new EdgeError(err.status, err.code, err.message, err.extra.param ?? null, err.extra.retryAfter);
  }
  const fe = err as FastifyError;
  if (fe?.code === "FST_ERR_CTP_BODY_TOO_LARGE") return new EdgeError(413, "request_too_large", "the request body is too large (limit 1 MiB)");
  if (fe?.code === "FST_ERR_CTP_EMPTY_JSON_BODY" || fe?.code === "FST_ERR_CTP_INVALID_JSON_BODY" || fe instanceof SyntaxError) {
    return new EdgeError(400, "invalid_json", "the request body is not valid JSON");
  }
  if (fe?.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return new EdgeError(415, "unsupported_media_type", "send the body as application/json");
  if (fe?.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) return new EdgeError(fe.statusCode, fe.code?.toLowerCase() ?? null, fe.message);
  return new EdgeError(500, "internal_error", "internal error");
}

export function installEdgeErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler(async (err, request, reply) => {
    const error = toEdgeError(err);
    if (error.status >= 500 && error.code === "internal_error") request.log.error({ err }, "edge request failed");
    if (error.status === 413) await drainRequestBody(request.raw);
    return sendEdgeError(reply, error);
  });
  app.setNotFoundHandler((request, reply) => sendEdgeError(reply, new EdgeError(404, null, `Invalid URL (${request.method} ${request.url.split("?")[0]})`)));
}
