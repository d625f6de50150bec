/**
 * The edge: OpenAI-compatible endpoints of deployments, on the edge listener.
 * Host routing `<slug>.<deployDomain>` and the local path form `/d/<slug>/v1/...`.
 */
import type { FastifyInstance } from "fastify";
import type { CloudContext } from "../context.js";
import type { InferenceService } from "../inference/index.js";
import { AuthFailureLimiter } from "./authFailureLimiter.js";
import { chatRoutes } from "./chatRoutes.js";
import { corsOriginsFromEnv, installCors } from "./cors.js";
import { pathSlug, slugFromHost } from "./hostRouting.js";
import { DeploymentAuth } from "./deploymentAuth.js";
import { DeploymentCache } from "./deploymentCache.js";
import { installEdgeErrorHandlers } from "./errors.js";
import { KeyMeter } from "./keyMeter.js";
import { LastUsedRecorder } from "./lastUsedRecorder.js";
import { UsageRecorder } from "./usageRecorder.js";

export interface Edge {
  close(): Promise<void>;
}

export interface EdgeSettings {
  /** Longest a cached deployment/key state is trusted without a change notification (other processes). */
  stateTtlMs: number;
  authFailureBurst: number;
  authFailureRefillPerSecond: number;
  lastUsedFlushMs: number;
  /** How often usage per key and minute is written. */
  usageFlushMs: number;
}

export function edgeSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): EdgeSettings {
  const num = (name: string, fallback: number) => {
    const value = Number(env[name]);
    return Number.isFinite(value) && value > 0 ? value : fallback;
  };
  return {
    // Below 1 s, so a change made through another cloud process is honoured within the documented bound.
    stateTtlMs: num("SVC_EDGE_STATE_TTL_MS", 900),
    authFailureBurst: num("SVC_EDGE_AUTH_FAILURE_BURST", 20),
    authFailureRefillPerSecond: num("SVC_EDGE_AUTH_FAILURE_REFILL", 1),
    lastUsedFlushMs: num("SVC_EDGE_LAST_USED_FLUSH_MS", 1000),
    usageFlushMs: num("SVC_EDGE_USAGE_FLUSH_MS", 1000),
  };
}

export async function mountEdge(
  app: FastifyInstance,
  ctx: CloudContext,
  inference: InferenceService,
  settings: EdgeSettings = edgeSettingsFromEnv(),
): Promise<Edge> {
  installEdgeErrorHandlers(app);
  // Clients such as `curl -d` send JSON as form-encoded; read any body as JSON rather than 415.
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => {
    try {
      done(null, body === "" ? undefined : JSON.parse(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  const cache = new DeploymentCache(ctx, settings.stateTtlMs, (target) => inference.resolve(target));
  installCors(
    app,
    corsOriginsFromEnv(),
    (request) => pathSlug(request.url) ?? slugFromHost(request.host, ctx.deployDomain),
    async (slug) => (await cache.get(slug))?.corsOrigins ?? null,
  );
  const limiter = new AuthFailureLimiter({ burst: settings.authFailureBurst, refillPerSecond: settings.authFailureRefillPerSecond });
  const lastUsed = new LastUsedRecorder(ctx, settings.lastUsedFlushMs);
  const keyed = { meter: new KeyMeter(ctx), usage: new UsageRecorder(ctx, settings.usageFlushMs), metrics: ctx.metrics };
  const auth = new DeploymentAuth(cache, limiter, lastUsed, Date.now, (deployment, key) => {
    keyed.usage.note(key.id, deployment.id, { status: 401, promptTokens: 0, completionTokens: 0, latencyMs: null, timeToFirstTokenMs: null });
    keyed.metrics.keyRequests.inc({ deployment: deployment.slug, key_prefix: key.prefix, status: "401" });
  });
  chatRoutes(app, { ctx, auth, cache, inference, keyed });
  return {
    async close() {
      cache.close();
      limiter.close();
      await lastUsed.close();
      await keyed.meter.close();
      await keyed.usage.close();
    },
  };
}
