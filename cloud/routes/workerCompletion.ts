/**
 * A worker that restarted with a trained adapter still to deliver (cloud/workers/pendingUploads.ts)
 * finishes the job over HTTP once every artifact is acknowledged: its new link cannot continue
 * the dead process's event numbering. Fenced by the claim like the uploads, and idempotent: a
 * job this claim already completed answers success again, so a retried call is safe.
 */
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { route } from "../../sdk/api/route.js";
import { serveRoute } from "../../server-shared/serveRoute.js";
import type { CloudContext } from "../context.js";
import { appendJobEvent, findJob, requireCurrentClaim } from "../domain/jobs.js";
import { requireWorker } from "../http/auth.js";

const ClaimQuery = Type.Object({
  claim: Type.Integer({ minimum: 1, errorMessage: "claim must be the claim number of the job's assignment" }),
});

export const workerCompleteJobRoute = route({
  method: "POST",
  path: "/v1/worker/jobs/:id/complete",
  query: ClaimQuery,
  body: Type.Record(Type.String(), Type.Unknown()),
  response: Type.Object({ ok: Type.Boolean() }),
});

export function workerCompletionRoutes(app: FastifyInstance, ctx: CloudContext): void {
  serveRoute(app, workerCompleteJobRoute, async (request) => {
    await requireWorker(ctx, request);
    const { claim } = request.query;
    const done = await findJob(ctx, request.params.id);
    if (done && Number(done.claim) === claim && done.status === "completed") return { ok: true };
    const job = await requireCurrentClaim(ctx, request.params.id, claim);
    await appendJobEvent(ctx, job.id, "training.completed", request.body);
    return { ok: true };
  });
}
