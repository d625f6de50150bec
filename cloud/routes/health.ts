import { timingSafeEqual } from "node:crypto";
import type { CloudContext } from "../context.js";
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import type { InferenceDeviceReport } from "../../sdk/api/inference.js";
import { DRAIN_ROUTE, DRAIN_TOKEN_HEADER } from "../../sdk/platform/daemonDrain.js";

export interface DrainListener {
  /** The secret `svc cloud stop` reads from the data dir (sdk/platform/daemonDrain.ts). */
  token: string;
  onDrain: () => void;
}

/**
 * `inferenceDevice` is what llama.cpp decodes on, shown in /readyz (null until the inference child has loaded it): it
 * tells an operator whether the GPU serves without reading the log.
 */
export function healthRoutes(
  app: FastifyInstance,
  ctx: CloudContext,
  isReady: () => boolean,
  drain?: DrainListener,
  inferenceDevice: () => InferenceDeviceReport | null = () => null,
): void {
  // `svc cloud stop`'s graceful stop on every OS (a signal on Windows is a hard kill). Not in the API contract: it is
  // the daemon's own, like /readyz, and answers only the holder of the data dir's drain token.
  app.post(DRAIN_ROUTE, async (request, reply) => {
    const given = Buffer.from(String(request.headers[DRAIN_TOKEN_HEADER] ?? ""));
    const expected = Buffer.from(drain?.token ?? "");
    if (!drain || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      return reply.status(403).send({ error: { code: "forbidden", message: "a drain request needs the daemon's drain token", requestId: request.id } });
    }
    drain.onDrain();
    return reply.status(202).send({ ok: true });
  });
  app.get("/healthz", async () => ({ ok: true }));
  app.get("/readyz", async (_request, reply) => {
    if (!isReady()) return reply.status(503).send({ ok: false, reason: "starting or shutting down" });
    const storageProblem = await ctx.storage.notReadyReason();
    if (storageProblem) return reply.status(503).send({ ok: false, reason: storageProblem });
    await sql`select 1`.execute(ctx.db);
    return { ok: true, inference: { device: inferenceDevice() } };
  });
  app.get("/metrics", async (_request, reply) => {
    reply.header("content-type", ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  });
}
