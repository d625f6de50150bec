/**
 * The edge: OpenAI-compatible endpoints of deployments, on the edge listener.
 * Host routing `<slug>.<deployDomain>` and the local path form `/d/<slug>/v1/...`.
 */
import type { FastifyInstance } from "fastify";
import type { CloudContext } from "../context.js";
import type { InferenceService } from "../inference/index.js";

export interface Edge {
  close(): Promise<void>;
}

export async function mountEdge(_app: FastifyInstance, _ctx: CloudContext, _inference: InferenceService): Promise<Edge> {
  return { close: async () => {} };
}
