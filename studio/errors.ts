/**
 * The studio's one wire envelope for failures, the cloud's `{"error":{"code","message","requestId"}}`, and the
 * mapping of everything a route can throw onto it in one place (STYLE.md 8). Cloud errors keep the upstream
 * status, code, message and request id, so the UI shows exactly what the cloud said (SPEC section 7); Fastify's
 * own body errors get the cloud's codes and words (a malformed body is `invalid_json` from either).
 */
import { randomUUID } from "node:crypto";
import type { FastifyError, FastifyInstance, FastifyServerOptions } from "fastify";
import { ApiError, ConnectionError, MissingStateError } from "../sdk/errors.js";
import { clientErrorResponder, fastifyBodyError, REQUEST_ID_HEADER, routerErrorResponder, type ErrorEnvelope } from "../server-shared/frameworkErrors.js";

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
  /** The cloud's id of the request that failed there; else the studio's own. */
  requestId?: string;
}

const envelope: ErrorEnvelope = (_status, code, message, requestId) => ({ error: { code, message, requestId } });

/** Fastify options of the studio's own answers: request ids, and the parser's and router's refusals in the envelope. */
export const studioErrorOptions: Pick<FastifyServerOptions, "genReqId" | "clientErrorHandler" | "frameworkErrors"> = {
  genReqId: () => randomUUID(),
  clientErrorHandler: clientErrorResponder(envelope, randomUUID),
  frameworkErrors: routerErrorResponder(envelope),
};

export function toWireError(err: unknown): WireError {
  if (err instanceof StudioError) return { status: err.status, code: err.code, message: err.message };
  if (err instanceof ApiError) return { status: err.status, code: err.code, message: err.message, requestId: err.requestId };
  // A 4xx: the user has to write `.svc/state.json` (the message says how); retrying cannot help.
  if (err instanceof MissingStateError) return { status: 409, code: "missing_project_state", message: err.message };
  if (err instanceof ConnectionError) return { status: 502, code: "cloud_unreachable", message: err.message };
  const fastifyError = err as Partial<FastifyError>;
  if (fastifyError.validation) return { status: 400, code: "invalid_request", message: fastifyError.message ?? "invalid request" };
  const body = fastifyBodyError(err);
  if (body) return body;
  if (fastifyError.statusCode && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return { status: fastifyError.statusCode, code: fastifyError.code?.toLowerCase() ?? "invalid_request", message: fastifyError.message ?? "invalid request" };
  }
  return { status: 500, code: "internal_error", message: err instanceof Error ? err.message : String(err) };
}

export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((err, request, reply) => {
    const wire = toWireError(err);
    if (wire.status >= 500) request.log.error({ err }, "studio request failed");
    const requestId = wire.requestId ?? request.id;
    void reply
      .status(wire.status)
      .header(REQUEST_ID_HEADER, requestId)
      .send(envelope(wire.status, wire.code, wire.message, requestId));
  });
  app.setNotFoundHandler((request, reply) => {
    void reply
      .status(404)
      .header(REQUEST_ID_HEADER, request.id)
      .send(envelope(404, "not_found", `no route ${request.method} ${request.url.split("?")[0]}`, request.id));
  });
}
