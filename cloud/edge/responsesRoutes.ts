/**
 * `POST /v1/responses` (OpenAI's Responses API) of a deployment, in both URL forms, beside
 * /v1/chat/completions: same authorisation, rate limits, queue and error envelope; the request
 * is read as the chat it means (cloud/inference/responsesRequest.ts).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import type { InferenceService } from "../inference/index.js";
import { parseResponsesRequest } from "../inference/responsesRequest.js";
import { answerResponses } from "../inference/responsesResponse.js";
import { IGNORED_FIELDS_HEADER } from "./chatRoutes.js";
import type { DeploymentAuth } from "./deploymentAuth.js";
import type { DeploymentCache } from "./deploymentCache.js";
import { slugReaders } from "./hostRouting.js";
import { answerWithKey, tokenReserve, type KeyedServices } from "./keyedAnswer.js";

export function responsesRoutes(
  app: FastifyInstance,
  ctx: CloudContext,
  auth: DeploymentAuth,
  cache: DeploymentCache,
  inference: InferenceService,
  keyed: KeyedServices,
): void {
  const { hostSlug, pathSlug } = slugReaders(ctx);

  const create = (slugOf: (r: FastifyRequest) => string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const { deployment, key } = await auth.authorizeKey(request, slugOf(request));
    const parsed = parseResponsesRequest(request.body);
    if (parsed.chat.ignored.length > 0) {
      void reply.header(IGNORED_FIELDS_HEADER, parsed.chat.ignored.join(", "));
      request.log.warn({ ignored: parsed.chat.ignored }, "request fields ignored");
    }
    // The backend is resolved once per deployment state and kept beside it, as for chat.
    const backend = deployment.backend ?? (await cache.backend(deployment));
    await answerWithKey(
      reply,
      { ...keyed, deploymentId: deployment.id, slug: deployment.slug, key },
      inference,
      tokenReserve(parsed.chat.params, 1),
      (metered) => answerResponses(reply, metered, backend, parsed, { model: deployment.slug, queueKey: deployment.id }),
    );
  };

  app.post("/v1/responses", create(hostSlug));
  app.post("/d/:slug/v1/responses", create(pathSlug));
}
