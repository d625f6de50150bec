/**
 * `POST /v1/inference/chat` on the control plane: the Playground's and the SDK's mid-run `infer`
 * helper's way to ask a job's adapter, a checkpoint or a base model for a reply, scoped to the
 * caller's project. Same engine and same JSON/SSE format as the edge; errors use the control
 * plane's envelope.
 */
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { badRequest, HttpError, notFound } from "../http/errors.js";
import { InferenceError, type InferenceService } from "../inference/index.js";
import { parseChatRequest } from "../inference/openaiRequest.js";
import { answerChat } from "../inference/answerChat.js";
import { projectScope } from "./scope.js";
import type { FastifyInstance } from "fastify";
import { inferenceChatRoute } from "../../sdk/api/inference.js";
import { serveRoute } from "../../server-shared/serveRoute.js";

export function inferenceRoutes(app: FastifyInstance, ctx: CloudContext, inference: InferenceService): void {
  serveRoute(app, inferenceChatRoute, async (request, reply) => {
    const scope = await projectScope(ctx, request, request.body.projectId);
    const { target } = request.body;
    await requireTargetInScope(ctx, scope, target);
    try {
      const chat = parseChatRequest(request.body);
      const backend = await inference.resolve(target);
      await answerChat(reply, inference, backend, chat, { model: modelName(target), queueKey: `project:${scope[0]}` });
    } catch (err) {
      if (!(err instanceof InferenceError)) throw err;
      if (err.extra.retryAfter !== undefined) reply.header("retry-after", String(err.extra.retryAfter));
      throw new HttpError(err.status, err.code, err.message);
    }
  });
}

/** Jobs are private to their project; base models are shared by the whole cloud. */
async function requireTargetInScope(ctx: CloudContext, scope: string[], target: DeploymentTarget): Promise<void> {
  if (target.kind === "base_model") {
    const model = await ctx.db.selectFrom("base_models").select("name").where("name", "=", target.name).executeTakeFirst();
    if (!model) throw badRequest(`target.name: unknown base model "${target.name}"`, "unknown_target");
    return;
  }
  const job = await ctx.db.selectFrom("jobs").select(["project_id"]).where("id", "=", target.jobId).executeTakeFirst();
  if (!job || !scope.includes(job.project_id)) throw notFound(`job ${target.jobId}`);
}

function modelName(target: DeploymentTarget): string {
  if (target.kind === "base_model") return target.name;
  return target.kind === "adapter" ? `job-${target.jobId}` : `job-${target.jobId}-step-${target.step}`;
}
