/**
 * The studio's one wire envelope for failures, `{"error":{"code","message"}}`, and the mapping of
 * everything a route can throw onto it in one place (STYLE.md 8). Cloud errors keep the upstream
 * status and message, so the UI shows exactly what the cloud said (SPEC section 7).
 */
import type { FastifyError, FastifyInstance } from "fastify";
import { ApiError, ConnectionError, MissingStateError } from "../sdk/errors.js";

export class StudioError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "StudioError";
  }
}

export interface WireError {
  status: number;
  code: string;
  message: string;
}

export function toWireError(err: unknown): WireError {
  if (err instanceof StudioError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message };
  // A 4xx: the user has to write `.svc/state.json` (the message says how); retrying cannot help.
  if (err instanceof MissingStateError) return { status: 409, code: "missing_project_state", message: err.message };
  if (err instanceof ConnectionError) return { status: 502, code: "cloud_unreachable", message: err.message };
  const fastifyError = err as Partial<FastifyError>;
  if (fastifyError.validation) return { status: 400, code: "invalid_request", message: fastifyError.message ?? "invalid request" };
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return { status: fastifyError.statusCode, code: fastifyError.code?.toLowerCase() ?? "invalid_request", message: fastifyError.message ?? "invalid request" };
  }
  return { status: 500, code: "internal_error", message: err instanceof Error ? err.message : String(err) };
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const wire = toWireError(err);
    if (wire.status >= 500) request.log.error({ err }, "studio request failed");
    void reply.status(wire.status).send({ error: { code: wire.code, message: wire.message } });
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({ error: { code: "not_found", message: `no route ${request.method} ${request.url.split("?")[0]}` } });
  });
}
