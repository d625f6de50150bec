/**
 * Maps every error of the control plane (HttpError, Fastify's own validation and body-size errors, a full or
 * read-only disk) to the wire envelope `{"error":{"code","message","requestId"}}` in one place.
 */
import type { FastifyError, FastifyInstance } from "fastify";
import { fastifyBodyError } from "../../server-shared/frameworkErrors.js";
import { drainRequestBody } from "./drain.js";
import { HttpError } from "./errors.js";
import { type StorageHealth, storageProblemOf } from "./storageHealth.js";

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
