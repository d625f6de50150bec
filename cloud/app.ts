/**
 * Builds the two Fastify apps of one cloud process: the control plane and the edge. They are
 * separate listeners so the edge can be scaled, rate limited and exposed independently.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { CloudContext } from "./context.js";
import { clientErrorResponder, routerErrorResponder, type ErrorEnvelope } from "../server-shared/frameworkErrors.js";
import { installErrorHandler } from "./http/errorHandler.js";
import { newRequestId, REQUEST_ID_HEADER, requestId } from "./http/requestIds.js";
import { accountRoutes } from "./routes/accounts.js";
import { datasetRoutes } from "./routes/datasets.js";
import { deploymentRoutes } from "./routes/deployments.js";
import { healthRoutes, type DrainListener } from "./routes/health.js";
import { jobRoutes, type JobCanceller } from "./routes/jobs.js";
import { jobListWatchRoutes } from "./routes/jobListWatch.js";
import { modelRoutes } from "./routes/models.js";
import { workerFileRoutes } from "./routes/workerFiles.js";
import { workerCompletionRoutes } from "./routes/workerCompletion.js";
import { inferenceRoutes } from "./routes/inference.js";
import { workerListRoutes, type WorkerLister } from "./routes/workers.js";
import type { InferenceService } from "./inference/index.js";
import { servedOn } from "./inference/servedOn.js";
import { contractValidation } from "../server-shared/serveRoute.js";

/**
 * The proxies (addresses or CIDR ranges, comma-separated in SVC_TRUSTED_PROXIES) whose X-Forwarded-For the cloud
 * believes; none by default, so a request's address is its TCP peer.
 */
export function trustedProxies(env: NodeJS.ProcessEnv = process.env): string[] | false {
  const hops = (env.SVC_TRUSTED_PROXIES ?? "")
    .split(",")
    .map((hop) => hop.trim())
    .filter(Boolean);
  return hops.length > 0 ? hops : false;
}

/** Fastify options shared by both listeners; each answers parser-level failures in its own envelope. */
function baseFastify(logger: boolean, envelope: ErrorEnvelope, extra: Partial<FastifyServerOptions> = {}): FastifyInstance {
  const options: FastifyServerOptions = {
    logger: logger ? { level: "info" } : false,
    bodyLimit: 1 << 20,
    genReqId: requestId,
    clientErrorHandler: clientErrorResponder(envelope, newRequestId),
    frameworkErrors: routerErrorResponder(envelope),
    // X-Forwarded-For is believed only from the hops listed in SVC_TRUSTED_PROXIES: trusting anyone's
    // would let a client pick its own address and dodge the failed-auth limiter.
    trustProxy: trustedProxies(),
    ...contractValidation,
  };
  const app = Fastify({ ...options, ...extra });
  // Callback-style hooks, here and below: an async hook costs a promise per request.
  app.addHook("onRequest", (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  return app;
}

/** The control plane's envelope (cloud/http/errors.ts) and OpenAI's for the edge (cloud/edge/errors.ts). */
const controlEnvelope: ErrorEnvelope = (_status, code, message, requestId) => ({ error: { code, message, requestId } });
const openAiEnvelope: ErrorEnvelope = (status, code, message) => ({
  error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", param: null, code },
});

/** How long the edge waits for a whole request (headers and body); a stalled upload gets 408. */
export function edgeRequestTimeoutMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.SVC_EDGE_REQUEST_TIMEOUT_MS);
  return Number.isFinite(value) && value > 0 ? value : 30_000;
}

function countRequests(app: FastifyInstance, ctx: CloudContext, listener: string): void {
  app.addHook("onResponse", (request, reply, done) => {
    ctx.metrics.httpRequests.inc({ listener, method: request.method, status: String(reply.statusCode) });
    ctx.metrics.httpDuration.observe({ listener }, reply.elapsedTime / 1000);
    done();
  });
}

export function buildControlPlane(
  ctx: CloudContext,
  workers: JobCanceller & WorkerLister,
  options: { logger: boolean; isReady: () => boolean; inference: InferenceService; drain?: DrainListener },
): FastifyInstance {
  const app = baseFastify(options.logger, controlEnvelope);
  installErrorHandler(app, ctx.storage);
  countRequests(app, ctx, "control");
  healthRoutes(app, ctx, options.isReady, options.drain, () => options.inference.device);
  accountRoutes(app, ctx);
  jobRoutes(app, ctx, workers);
  jobListWatchRoutes(app, ctx);
  datasetRoutes(app, ctx);
  deploymentRoutes(app, ctx, {
    servedOn: (target) => servedOn(options.inference, target),
    changed: (before, after) => options.inference.deploymentChanged(before, after),
  });
  modelRoutes(app, ctx);
  workerFileRoutes(app, ctx);
  workerCompletionRoutes(app, ctx);
  workerListRoutes(app, ctx, workers);
  inferenceRoutes(app, ctx, options.inference);
  return app;
}

/** The edge listener; its routes are mounted by cloud/edge (mountEdge), which owns its error format. */
export function buildEdge(ctx: CloudContext, options: { logger: boolean }): FastifyInstance {
  const timeout = edgeRequestTimeoutMs();
  const app = baseFastify(options.logger, openAiEnvelope, {
    requestTimeout: timeout,
    // Node checks deadlines on this interval (30 s by default), and on Node 20 a body still
    // arriving is cut off by headersTimeout, not requestTimeout: both must follow the setting.
    http: { connectionsCheckingInterval: Math.min(1000, timeout), headersTimeout: Math.min(timeout, 60_000) },
  } as Partial<FastifyServerOptions>);
  countRequests(app, ctx, "edge");
  return app;
}
