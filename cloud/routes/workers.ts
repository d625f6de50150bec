import type { FastifyInstance } from "fastify";
import type { CloudContext } from "../context.js";
import { requireUser } from "../http/auth.js";
import { workersApi, type WorkerInfo } from "../../sdk/api/workers.js";
import { serveRoutes } from "../../server-shared/serveRoute.js";

export interface WorkerLister {
  /** Every worker linked to any instance, and those gone within the hour. */
  listWorkers(): Promise<WorkerInfo[]>;
}

/**
 * The worker list, for any user: workers are the cloud's, not a project's, and a user choosing where training runs
 * needs to see them. A worker token gets none of it (it links, it does not look around).
 */
export function workerListRoutes(app: FastifyInstance, ctx: CloudContext, workers: WorkerLister): void {
  serveRoutes(app, workersApi, {
    listWorkers: async (request) => {
      await requireUser(ctx, request);
      return workers.listWorkers();
    },
  });
}
