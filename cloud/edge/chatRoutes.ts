/**
 * The OpenAI-compatible routes of a deployment, in both URL forms:
 * `<slug>.<deployDomain>/v1/...` (host form) and `/d/<slug>/v1/...` (path form, for clients that
 * cannot resolve *.localhost). Anything else, such as `/v1/chat/completions/chat/completions`,
 * is left to the not-found handler.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import type { InferenceService } from "../inference/index.js";
import { parseChatRequest } from "../inference/openaiRequest.js";
import { sendChat } from "../inference/openaiResponse.js";
import type { DeploymentAuth } from "./deploymentAuth.js";
import type { DeploymentState } from "./deploymentCache.js";
import { edgeNotFound } from "./errors.js";
import { slugFromHost } from "./hostRouting.js";

export function chatRoutes(app: FastifyInstance, ctx: CloudContext, auth: DeploymentAuth, inference: InferenceService): void {
  const hostSlug = (request: FastifyRequest) => {
    const slug = slugFromHost(request.host, ctx.deployDomain);
    if (!slug) throw edgeNotFound(`no deployment answers at host ${request.host}; use http://<slug>.${ctx.deployDomain}/v1 or ${ctx.edgeUrl}/d/<slug>/v1`);
    return slug;
  };
  const pathSlug = (request: FastifyRequest) => (request.params as { slug: string }).slug.toLowerCase();

  const models = (slugOf: (r: FastifyRequest) => string) => async (request: FastifyRequest) => {
    const deployment = await auth.authorize(request, slugOf(request));
    return {
      object: "list",
      data: [{ id: deployment.slug, object: "model", created: Math.floor(Date.parse(deployment.createdAt) / 1000), owned_by: "svc" }],
    };
  };

  const completions = (slugOf: (r: FastifyRequest) => string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const deployment = await auth.authorize(request, slugOf(request));
    const chat = parseChatRequest(request.body);
    await answer(request, reply, deployment, chat);
  };

  const answer = async (request: FastifyRequest, reply: FastifyReply, deployment: DeploymentState, chat: ReturnType<typeof parseChatRequest>) => {
    const abort = new AbortController();
    // The client hanging up cancels a queued or running generation.
    reply.raw.on("close", () => !reply.raw.writableFinished && abort.abort());
    const backend = await inference.resolve(deployment.target);
    const stream = await inference.chat(backend, chat.params, { stream: chat.stream, queueKey: deployment.id, signal: abort.signal });
    await sendChat(reply, stream, { model: deployment.slug, stream: chat.stream, includeUsage: chat.includeUsage });
  };

  app.get("/v1/models", models(hostSlug));
  app.get("/d/:slug/v1/models", models(pathSlug));
  app.post("/v1/chat/completions", completions(hostSlug));
  app.post("/d/:slug/v1/chat/completions", completions(pathSlug));
}
