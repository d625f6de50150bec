import type { CloudContext } from "../context.js";
import { listModels, registerModel } from "../domain/models.js";
import { requireUser, requireWorker } from "../http/auth.js";
import { modelsApi } from "../../sdk/api/models.js";
import { serveRoutes } from "../../server-shared/serveRoute.js";
import type { FastifyInstance } from "fastify";

export function modelRoutes(app: FastifyInstance, ctx: CloudContext): void {
  serveRoutes(app, modelsApi, {
    listModels: async (request) => {
      await requireUser(ctx, request);
      return listModels(ctx);
    },
    // Registering a model names files on the cloud's machine, so it takes the machine (worker) token
    // that only someone with access to the data dir can read.
    registerModel: async (request) => {
      await requireWorker(ctx, request);
      return registerModel(ctx, request.body);
    },
  });
}
