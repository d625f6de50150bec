/** File transfer for workers: dataset download and artifact upload, worker token only. */
import { createReadStream, createWriteStream, promises as fs } from "node:fs";
import path from "node:path";
import { Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance } from "fastify";
import { route } from "../../sdk/api/route.js";
import { serveRoute } from "../../server-shared/serveRoute.js";
import type { CloudContext } from "../context.js";
import { getDatasetFile } from "../domain/datasets.js";
import { requireCurrentClaim } from "../domain/jobs.js";
import { newId, nowIso } from "../domain/ids.js";
import { requireWorker } from "../http/auth.js";
import { storageProblemOf } from "../http/storageHealth.js";
import { badRequest, HttpError, notFound } from "../http/errors.js";

const ArtifactQuery = Type.Object({
  name: Type.String({ pattern: "^[A-Za-z0-9._-]{1,120}$", errorMessage: "name must be 1-120 characters of A-Z, a-z, 0-9, '.', '_' and '-'" }),
  kind: Type.Union([Type.Literal("checkpoint"), Type.Literal("adapter"), Type.Literal("file")], { errorMessage: 'kind must be "checkpoint", "adapter" or "file"' }),
  step: Type.Integer({ minimum: 0, errorMessage: "step must be a non-negative integer" }),
  claim: Type.Integer({ minimum: 1, errorMessage: "claim must be the claim number of the job's assignment" }),
});

export function workerFileRoutes(app: FastifyInstance, ctx: CloudContext): void {
  // Artifacts stream straight to disk: the parser hands the request stream through untouched.
  app.addContentTypeParser("application/octet-stream", (_request, payload, done) => done(null, payload));

  serveRoute(app, route({ method: "GET", path: "/v1/worker/datasets/:id" }), async (request, reply) => {
    await requireWorker(ctx, request);
    const row = await getDatasetFile(ctx, request.params.id);
    reply.header("content-type", "application/jsonl");
    return reply.send(createReadStream(row.path));
  });

  serveRoute(app, route({ method: "GET", path: "/v1/worker/models/:name" }), async (request, reply) => {
    await requireWorker(ctx, request);
    const model = await ctx.db.selectFrom("base_models").select(["path"]).where("name", "=", request.params.name).executeTakeFirst();
    if (!model?.path) throw notFound(`model file ${request.params.name}`);
    reply.header("content-type", "application/octet-stream");
    return reply.send(createReadStream(model.path));
  });

  // Streams the body to a temp file and renames it into place, so a dropped upload leaves no partial artifact.
  serveRoute(
    app,
    route({ method: "PUT", path: "/v1/worker/jobs/:id/artifacts", query: ArtifactQuery, response: Type.Object({ ok: Type.Boolean() }), status: 201 }),
    async (request) => {
      await requireWorker(ctx, request);
      const { name, kind, step, claim } = request.query;
      // Fencing: only the job's current claim may upload, and only while the job is live.
      const job = await requireCurrentClaim(ctx, request.params.id, claim);
      const dir = path.join(ctx.dataDir, "artifacts", job.id);
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, name);
      const temp = `${file}.${newId()}.part`;
      try {
        // The body is a raw stream (no parser buffers it): count it, and stop at the first byte past the limit
        // instead of writing the whole oversized upload to disk first.
        await pipeline(request.body as NodeJS.ReadableStream, byteLimit(ctx.limits.artifactBytes), createWriteStream(temp));
        const { size } = await fs.stat(temp);
        await fs.rename(temp, file);
        await ctx.db
          .insertInto("artifacts")
          .values({ id: newId(), job_id: job.id, kind, step, name, path: file, size_bytes: size, created_at: nowIso() })
          .onConflict((oc) => oc.columns(["job_id", "name"]).doUpdateSet({ size_bytes: size, step, kind }))
          .execute();
      } catch (err) {
        await fs.rm(temp, { force: true });
        if (err instanceof HttpError || storageProblemOf(err)) throw err; // a full disk is the cloud's 507, not the worker's 400
        throw badRequest(`artifact upload failed: ${(err as Error).message}`);
      }
      return { ok: true };
    },
    { bodyLimit: ctx.limits.artifactBytes },
  );
}

/** Passes bytes through until more than `limit` have gone by, then fails with a 413. */
function byteLimit(limit: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen > limit) callback(new HttpError(413, "payload_too_large", `artifact is larger than the limit of ${limit} bytes`));
      else callback(null, chunk);
    },
  });
}
