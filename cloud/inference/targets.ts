/**
 * Resolves a deployment target to the backend that serves it: a base GGUF (plus the job's final
 * adapter or the checkpoint at step N) for the local engine, or an OpenAI-compatible upstream.
 */
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { InferenceError, type Backend } from "./types.js";

export async function resolveBackend(ctx: CloudContext, target: DeploymentTarget): Promise<Backend> {
  if (target.kind === "base_model") return baseModelBackend(ctx, target.name, null);
  const job = await ctx.db.selectFrom("jobs").select(["config"]).where("id", "=", target.jobId).executeTakeFirst();
  if (!job) throw unavailable(`job ${target.jobId} no longer exists`);
  const modelName = String((JSON.parse(job.config) as { model?: unknown }).model ?? "");
  const artifact = await ctx.db
    .selectFrom("artifacts")
    .select(["path"])
    .where("job_id", "=", target.jobId)
    .where("kind", "=", target.kind === "adapter" ? "adapter" : "checkpoint")
    .$if(target.kind === "checkpoint", (q) => q.where("step", "=", (target as { step: number }).step))
    .orderBy("step", "desc")
    .executeTakeFirst();
  if (!artifact) {
    const what = target.kind === "adapter" ? "a final adapter" : `a checkpoint at step ${(target as { step: number }).step}`;
    throw unavailable(`job ${target.jobId} has no ${what}`);
  }
  return baseModelBackend(ctx, modelName, artifact.path);
}

async function baseModelBackend(ctx: CloudContext, name: string, adapterPath: string | null): Promise<Backend> {
  const model = await ctx.db.selectFrom("base_models").selectAll().where("name", "=", name).executeTakeFirst();
  if (!model) throw unavailable(`base model "${name}" is not registered on this cloud`);
  if (model.source === "upstream" && model.upstream_url) {
    // An upstream applies adapters itself (e.g. vLLM --lora-modules), chosen by model name.
    return { kind: "upstream", baseUrl: model.upstream_url, model: model.adapter_model ?? model.name };
  }
  if (!model.path) throw unavailable(`base model "${name}" has no weights file`);
  return { kind: "local", modelPath: model.path, adapterPath };
}

const unavailable = (message: string) => new InferenceError(503, "target_unavailable", `this deployment cannot be served: ${message}`);
