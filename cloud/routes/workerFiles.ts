/** File transfer for workers: dataset download and artifact upload, worker token only. */
import { createHash } from "node:crypto";
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
import { hfFileNameProblem, isShippedHfFile } from "../workers/hfManifest.js";
import { workerFilesApi } from "../../sdk/api/workers.js";
import { storageProblemOf } from "../http/storageHealth.js";
import { badRequest, HttpError, notFound } from "../http/errors.js";

const ArtifactQuery = Type.Object({
  name: Type.String({ pattern: "^[A-Za-z0-9._-]{1,120}$", errorMessage: "name must be 1-120 characters of A-Z, a-z, 0-9, '.', '_' and '-'" }),
  kind: Type.Union([Type.Literal("checkpoint"), Type.Literal("adapter"), Type.Literal("file")], {
    errorMessage: 'kind must be "checkpoint", "adapter" or "file"',
  }),
  step: Type.Integer({ minimum: 0, errorMessage: "step must be a non-negative integer" }),
  claim: Type.Integer({ minimum: 1, errorMessage: "claim must be the claim number of the job's assignment" }),
  /** With the file's sha256 the upload is resumable: bytes of a dropped attempt are kept, and `offset` continues them. */
  sha256: Type.Optional(Type.String({ pattern: "^[0-9a-f]{64}$", errorMessage: "sha256 must be 64 lowercase hex digits" })),
  offset: Type.Optional(Type.Integer({ minimum: 0, errorMessage: "offset must be a non-negative integer" })),
});

const ReceivedQuery = Type.Object({
  claim: ArtifactQuery.properties.claim,
  sha256: Type.String({ pattern: "^[0-9a-f]{64}$", errorMessage: "sha256 must be 64 lowercase hex digits" }),
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

  serveRoute(app, workerFilesApi.downloadBaseModel, async (request, reply) => {
    await requireWorker(ctx, request);
    const model = await ctx.db.selectFrom("base_models").select(["path"]).where("name", "=", request.params.name).executeTakeFirst();
    if (!model?.path) throw notFound(`model file ${request.params.name}`);
    reply.header("content-type", "application/octet-stream");
    return reply.send(createReadStream(model.path));
  });

  // Only a name the folder's list holds (hfFolderManifest: a shipped file that is there): never a path into or out of the folder.
  serveRoute(app, workerFilesApi.downloadHfModelFile, async (request, reply) => {
    await requireWorker(ctx, request);
    const { name, file } = request.params;
    const problem = hfFileNameProblem(file);
    if (problem) throw badRequest(`file: ${problem}`);
    const model = await ctx.db.selectFrom("base_models").select(["hf_folder"]).where("name", "=", name).executeTakeFirst();
    if (!model?.hf_folder) throw notFound(`Hugging Face folder of model ${name}`);
    const listed = isShippedHfFile(file) && (await fs.stat(path.join(model.hf_folder, file)).catch(() => null))?.isFile();
    if (!listed) throw notFound(`file ${file} of the Hugging Face folder of model ${name}`);
    console.error(`svc cloud: sending ${file} of the Hugging Face folder of ${name} to a worker`);
    reply.header("content-type", "application/octet-stream");
    return reply.send(createReadStream(path.join(model.hf_folder, file)));
  });

  // How much of a resumable upload (one file, by its sha256) the cloud holds: where the worker's next attempt starts.
  serveRoute(
    app,
    route({
      method: "GET",
      path: "/v1/worker/jobs/:id/artifacts/:name/received",
      query: ReceivedQuery,
      response: Type.Object({ receivedBytes: Type.Integer() }),
    }),
    async (request) => {
      await requireWorker(ctx, request);
      const job = await requireCurrentClaim(ctx, request.params.id, request.query.claim);
      const name = artifactName(request.params.name);
      const size = await fs.stat(partPath(ctx, job.id, name, request.query.sha256)).then(
        (stat) => stat.size,
        () => 0,
      );
      return { receivedBytes: size };
    },
  );

  // Streams the body to a part file and renames it into place once whole, so a dropped upload leaves no partial
  // artifact. Sending the same name again replaces the artifact (one row per job and name): a retry is safe.
  serveRoute(
    app,
    route({ method: "PUT", path: "/v1/worker/jobs/:id/artifacts", query: ArtifactQuery, response: Type.Object({ ok: Type.Boolean() }), status: 201 }),
    async (request) => {
      await requireWorker(ctx, request);
      const { name, kind, step, claim, sha256, offset = 0 } = request.query;
      // Fencing: only the job's current claim may upload, and only while the job is live.
      const job = await requireCurrentClaim(ctx, request.params.id, claim);
      const dir = path.join(ctx.dataDir, "artifacts", job.id);
      await fs.mkdir(dir, { recursive: true });
      const file = path.join(dir, name);
      const temp = sha256 ? partPath(ctx, job.id, name, sha256) : `${file}.${newId()}.part`;
      if (sha256) {
        const received = await fs.stat(temp).then(
          (stat) => stat.size,
          () => 0,
        );
        if (offset !== received)
          throw new HttpError(409, "upload_offset_mismatch", `the cloud holds ${received} bytes of ${name}; an upload at offset ${offset} cannot continue it`);
      } else if (offset !== 0) {
        throw badRequest("offset needs sha256: only an upload that names its content can be resumed");
      }
      try {
        // The body is a raw stream (no parser buffers it): count it, and stop at the first byte past the limit
        // instead of writing the whole oversized upload to disk first.
        await pipeline(
          request.body as NodeJS.ReadableStream,
          byteLimit(ctx.limits.artifactBytes - offset),
          createWriteStream(temp, { flags: offset > 0 ? "a" : "w" }),
        );
      } catch (err) {
        // A resumable upload keeps what arrived (the worker continues it), unless it is refused outright.
        if (!sha256 || err instanceof HttpError) await fs.rm(temp, { force: true });
        if (err instanceof HttpError || storageProblemOf(err)) throw err; // a full disk is the cloud's 507, not the worker's 400
        throw badRequest(`artifact upload failed: ${(err as Error).message}`);
      }
      if (sha256 && (await fileSha256(temp)) !== sha256) {
        await fs.rm(temp, { force: true });
        throw new HttpError(400, "checksum_mismatch", `the bytes received for ${name} do not have the sha256 the upload named; send it again from the start`);
      }
      const { size } = await fs.stat(temp);
      await fs.rename(temp, file);
      await ctx.db
        .insertInto("artifacts")
        .values({ id: newId(), job_id: job.id, kind, step, name, path: file, size_bytes: size, created_at: nowIso() })
        .onConflict((oc) => oc.columns(["job_id", "name"]).doUpdateSet({ size_bytes: size, step, kind }))
        .execute();
      return { ok: true };
    },
    { bodyLimit: ctx.limits.artifactBytes },
  );
}

/** The part file of a resumable upload: one per job, name and content. */
function partPath(ctx: CloudContext, jobId: string, name: string, sha256: string): string {
  return path.join(ctx.dataDir, "artifacts", jobId, `${name}.${sha256}.part`);
}

/** A path segment that is an artifact name (the same rule as the upload's `name`), else a 400. */
function artifactName(name: string): string {
  if (!/^[A-Za-z0-9._-]{1,120}$/.test(name) || name === "." || name === "..")
    throw badRequest("name must be 1-120 characters of A-Z, a-z, 0-9, '.', '_' and '-'");
  return name;
}

async function fileSha256(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
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
