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
import { answerChat } from "../inference/answerChat.js";
import type { DeploymentAuth } from "./deploymentAuth.js";
import type { DeploymentCache, DeploymentState } from "./deploymentCache.js";
import { EdgeError } from "./errors.js";
import { answerWithKey, tokenReserve, type KeyedServices } from "./keyedAnswer.js";
import { slugReaders } from "./hostRouting.js";

/** Names the top-level request fields the edge accepted but does not know (comma-separated). */
export const IGNORED_FIELDS_HEADER = "x-svc-ignored-fields";

export function chatRoutes(
  app: FastifyInstance,
  ctx: CloudContext,
  auth: DeploymentAuth,
  cache: DeploymentCache,
  inference: InferenceService,
  keyed: KeyedServices,
): void {
  const { hostSlug, pathSlug } = slugReaders(ctx);

  const modelObject = (deployment: DeploymentState) => ({
    id: deployment.slug,
    object: "model",
    created: Math.floor(Date.parse(deployment.createdAt) / 1000),
    owned_by: "svc",
  });
  const models = (slugOf: (r: FastifyRequest) => string) => async (request: FastifyRequest) => {
    const deployment = await auth.authorize(request, slugOf(request));
    return { object: "list", data: [modelObject(deployment)] };
  };
  /** `GET /v1/models/{id}`: the deployment is the only model its endpoint serves. */
  const model = (slugOf: (r: FastifyRequest) => string) => async (request: FastifyRequest) => {
    const deployment = await auth.authorize(request, slugOf(request));
    const id = (request.params as { model: string }).model;
    if (id !== deployment.slug)
      throw new EdgeError(404, "model_not_found", `The model '${id}' does not exist; this endpoint serves '${deployment.slug}'`, "model");
    return modelObject(deployment);
  };

  const completions = (slugOf: (r: FastifyRequest) => string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const { deployment, key } = await auth.authorizeKey(request, slugOf(request));
    const chat = parseChatRequest(request.body);
    if (chat.ignored.length > 0) {
      // Accepted as vLLM accepts them, but visible: a client can see its field had no effect.
      void reply.header(IGNORED_FIELDS_HEADER, chat.ignored.join(", "));
      request.log.warn({ ignored: chat.ignored }, "request fields ignored");
    }
    const backend = deployment.backend ?? (await cache.backend(deployment));
    await answerWithKey(
      reply,
      { ...keyed, deploymentId: deployment.id, slug: deployment.slug, key },
      inference,
      tokenReserve(chat.params, chat.choices),
      (metered) => answerChat(reply, metered, backend, chat, { model: deployment.slug, queueKey: deployment.id }),
    );
  };

  app.get("/v1/models", models(hostSlug));
  app.get("/d/:slug/v1/models", models(pathSlug));
  app.get("/v1/models/:model", model(hostSlug));
  app.get("/d/:slug/v1/models/:model", model(pathSlug));
  app.post("/v1/chat/completions", completions(hostSlug));
  app.post("/d/:slug/v1/chat/completions", completions(pathSlug));
}
