/**
 * The one typed error of the control plane and its wire envelope
 * `{"error":{"code","message","requestId"}}`. Handlers throw HttpError; the error handler below
 * maps it (and Fastify's own validation / body-size errors) to the envelope in one place.
 */
import { drainRequestBody } from "./drain.js";
import { fastifyBodyError } from "../../server-shared/frameworkErrors.js";
import type { FastifyError, FastifyInstance } from "fastify";
import { storageProblemOf, type StorageHealth } from "./storageHealth.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, code = "invalid_request") => new HttpError(400, code, message);
export const unauthorized = (message = "missing or invalid bearer token") => new HttpError(401, "unauthorized", message);
export const forbidden = (message: string) => new HttpError(403, "forbidden", message);
export const notFound = (what: string) => new HttpError(404, "not_found", `${what} not found`);
export const conflict = (code: string, message: string) => new HttpError(409, code, message);

export function installErrorHandler(app: FastifyInstance, storage: StorageHealth): void {
  app.setErrorHandler(async (err: FastifyError | HttpError, request, reply) => {
    const problem = storageProblemOf(err);
    const { status, code, message } = toWire(problem ? storage.refuse(problem, err) : err);
    if (status >= 500 && !problem) request.log.error({ err }, "request failed");
    if (status === 413) await drainRequestBody(request.raw);
    return reply.status(status).send({ error: { code, message, requestId: request.id } });
  });
  app.setNotFoundHandler((request, reply) => {
    void reply.status(404).send({
      error: { code: "not_found", message: `no route ${request.method} ${request.url.split("?")[0]}`, requestId: request.id },
    });
  });
}

function toWire(err: FastifyError | HttpError): { status: number; code: string; message: string } {
  if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message };
  const fe = err as FastifyError;
  if (fe.validation) return { status: 400, code: "invalid_request", message: fe.message };
  const body = fastifyBodyError(fe);
  if (body) return body;
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, code: fe.code?.toLowerCase() ?? "invalid_request", message: fe.message };
  }
  return { status: 500, code: "internal_error", message: "internal error" };
}
