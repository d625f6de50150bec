/**
 * A route of a deployment that generates (chat completions, responses), in both URL forms: the key is authorised
 * before the body is read, fields the edge accepted but does not know are named in a header, and the answer runs
 * within the key's limits on the deployment's backend (resolved once per deployment state and kept beside it).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import type { InferenceService } from "../inference/index.js";
import type { ChatRequest } from "../inference/openaiRequest.js";
import type { Backend } from "../inference/types.js";
import type { DeploymentAuth } from "./deploymentAuth.js";
import type { DeploymentCache } from "./deploymentCache.js";
import { slugReaders } from "./hostRouting.js";
import { answerWithKey, tokenReserve, type KeyedServices } from "./keyedAnswer.js";

/** Names the top-level request fields the edge accepted but does not know (comma-separated). */
export const IGNORED_FIELDS_HEADER = "x-svc-ignored-fields";

export interface EdgeServices {
  ctx: CloudContext;
  auth: DeploymentAuth;
  cache: DeploymentCache;
  inference: InferenceService;
  keyed: KeyedServices;
}

/** Serves `path` (`/v1/...`) and `/d/:slug` + `path`: `read` parses the body, `chatOf` names the chat it asks for. */
export function serveGeneration<T>(
  app: FastifyInstance,
  path: `/v1/${string}`,
  { ctx, auth, cache, inference, keyed }: EdgeServices,
  read: (body: unknown) => T,
  chatOf: (request: T) => ChatRequest,
  answer: (reply: FastifyReply, metered: InferenceService, backend: Backend, request: T, options: { model: string; queueKey: string }) => Promise<void>,
): void {
  const generate = (slugOf: (r: FastifyRequest) => string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const { deployment, key } = await auth.authorizeKey(request, slugOf(request));
    const parsed = read(request.body);
    const chat = chatOf(parsed);
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
      (metered) => answer(reply, metered, backend, parsed, { model: deployment.slug, queueKey: deployment.id }),
    );
  };
  const { hostSlug, pathSlug } = slugReaders(ctx);
  app.post(path, generate(hostSlug));
  app.post(`/d/:slug${path}`, generate(pathSlug));
}
