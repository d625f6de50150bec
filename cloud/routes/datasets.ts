import type { CloudContext } from "../context.js";
import { requireProject } from "../domain/accounts.js";
import { saveDataset } from "../domain/datasets.js";
import { requireUser } from "../http/auth.js";
import { badRequest } from "../http/errors.js";
import { uploadDatasetRoute } from "../../sdk/api/datasets.js";
import { serveRoute } from "../../server-shared/serveRoute.js";
import type { FastifyInstance } from "fastify";

const JSONL_TYPES = ["application/jsonl", "application/x-ndjson", "application/jsonlines", "text/plain"];

export function datasetRoutes(app: FastifyInstance, ctx: CloudContext): void {
  app.addContentTypeParser(JSONL_TYPES, { parseAs: "buffer", bodyLimit: ctx.limits.datasetBytes }, (_request, body, done) => done(null, body));

  serveRoute(
    app,
    uploadDatasetRoute,
    async (request) => {
      const userId = await requireUser(ctx, request);
      const project = await requireProject(ctx, userId, request.query.projectId);
      if (!Buffer.isBuffer(request.body)) throw badRequest("send the dataset as a JSONL body (content-type application/jsonl)");
      return saveDataset(ctx, project.id, request.query.name ?? "dataset.jsonl", request.body);
    },
    { bodyLimit: ctx.limits.datasetBytes },
  );
}
