/**
 * Builds the two Fastify apps of one cloud process: the control plane and the edge. They are
 * separate listeners so the edge can be scaled, rate limited and exposed independently.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import type { CloudContext } from "./context.js";
import { installErrorHandler } from "./http/errors.js";
import { accountRoutes } from "./routes/accounts.js";
import { datasetRoutes } from "./routes/datasets.js";
import { deploymentRoutes } from "./routes/deployments.js";
import { healthRoutes } from "./routes/health.js";
import { jobRoutes, type JobCanceller } from "./routes/jobs.js";
import { modelRoutes } from "./routes/models.js";
import { workerFileRoutes } from "./routes/workerFiles.js";
import { inferenceRoutes } from "./routes/inference.js";
import type { InferenceService } from "./inference/index.js";
import type { App } from "./routes/types.js";

/** Fastify options shared by both listeners. */
function baseFastify(logger: boolean): App {
  const options: FastifyServerOptions = {
    logger: logger ? { level: "info" } : false,
    bodyLimit: 1 << 20,
    // The cloud sits on loopback or behind a proxy that sets x-forwarded-for.
    trustProxy: true,
    ajv: {
      // verbose: the formatter below needs each error's parentSchema to read our errorMessage.
      customOptions: { allErrors: false, verbose: true },
      // `errorMessage` is our own schema annotation, declared so ajv's strict mode accepts it.
      plugins: [((ajv: { addKeyword(keyword: string): unknown }) => ajv.addKeyword("errorMessage")) as never],
    },
    schemaErrorFormatter(errors, dataVar) {
      type Annotated = (typeof errors)[number] & { parentSchema?: { errorMessage?: string } };
      // A failed union reports each branch and then the union itself; the annotated one names the field.
      const custom = (errors as Annotated[]).find((e) => e.parentSchema?.errorMessage)?.parentSchema?.errorMessage;
      if (custom) return new Error(custom);
      const first = errors[0];
      const field = (first?.instancePath ?? "").replace(/^\//, "").replace(/\//g, ".");
      if (first?.keyword === "required") return new Error(`${(first.params as { missingProperty: string }).missingProperty} is required`);
      return new Error(`${field || dataVar} ${first?.message ?? "is invalid"}`);
    },
  };
  return Fastify(options).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
}

function countRequests(app: App, ctx: CloudContext, listener: string): void {
  app.addHook("onResponse", async (request, reply) => {
    ctx.metrics.httpRequests.inc({ listener, method: request.method, status: String(reply.statusCode) });
    ctx.metrics.httpDuration.observe({ listener }, reply.elapsedTime / 1000);
  });
}

export function buildControlPlane(ctx: CloudContext, workers: JobCanceller, options: { logger: boolean; isReady: () => boolean; inference: InferenceService }): FastifyInstance {
  const app = baseFastify(options.logger);
  installErrorHandler(app as unknown as FastifyInstance);
  countRequests(app, ctx, "control");
  healthRoutes(app, ctx, options.isReady);
  accountRoutes(app, ctx);
  jobRoutes(app, ctx, workers);
  datasetRoutes(app, ctx);
  deploymentRoutes(app, ctx);
  modelRoutes(app, ctx);
  workerFileRoutes(app, ctx);
  inferenceRoutes(app, ctx, options.inference);
  return app as unknown as FastifyInstance;
}

/** The edge listener; its routes are mounted by cloud/edge (mountEdge), which owns its error format. */
export function buildEdge(ctx: CloudContext, options: { logger: boolean }): FastifyInstance {
  const app = baseFastify(options.logger);
  countRequests(app, ctx, "edge");
  return app as unknown as FastifyInstance;
}
