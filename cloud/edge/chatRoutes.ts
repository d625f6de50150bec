/**
 * The OpenAI-compatible routes of a deployment, in both URL forms:
 * `<slug>.<deployDomain>/v1/...` (host form) and `/d/<slug>/v1/...` (path form, for clients that
 * cannot resolve *.localhost). Anything else, such as `/v1/chat/completions/chat/completions`,
 * is left to the not-found handler.
 */
import type { FastifyInstance, FastifyRequest } from "fastify";
import { answerChat } from "../inference/answerChat.js";
import { parseChatRequest } from "../inference/openaiRequest.js";
import { parseResponsesRequest } from "../inference/responsesRequest.js";
import { answerResponses } from "../inference/responsesResponse.js";
import type { DeploymentState } from "./deploymentCache.js";
import { EdgeError } from "./errors.js";
import { type EdgeServices, serveGeneration } from "./generationRoute.js";
import { slugReaders } from "./hostRouting.js";

export function chatRoutes(app: FastifyInstance, services: EdgeServices): void {
  const { ctx, auth } = services;
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

  app.get("/v1/models", models(hostSlug));
  app.get("/d/:slug/v1/models", models(pathSlug));
  app.get("/v1/models/:model", model(hostSlug));
  app.get("/d/:slug/v1/models/:model", model(pathSlug));
  serveGeneration(app, "/v1/chat/completions", services, parseChatRequest, (chat) => chat, answerChat);
  // OpenAI's Responses API: the request is read as the chat it means (cloud/inference/responsesRequest.ts).
  serveGeneration(app, "/v1/responses", services, parseResponsesRequest, (request) => request.chat, answerResponses);
}
