import type { CloudContext } from "../context.js";
import type { FastifyInstance } from "fastify";
import { sql } from "kysely";

export function healthRoutes(app: FastifyInstance, ctx: CloudContext, isReady: () => boolean): void {
  app.get("/healthz", async () => ({ ok: true }));
  app.get("/readyz", async (_request, reply) => {
    if (!isReady()) return reply.status(503).send({ ok: false, reason: "starting or shutting down" });
    const storageProblem = await ctx.storage.notReadyReason();
    if (storageProblem) return reply.status(503).send({ ok: false, reason: storageProblem });
    await sql`select 1`.execute(ctx.db);
    return { ok: true };
  });
  app.get("/metrics", async (_request, reply) => {
    reply.header("content-type", ctx.metrics.registry.contentType);
    return ctx.metrics.registry.metrics();
  });
}
