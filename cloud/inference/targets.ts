/**
 * Resolves a deployment target to the backend that serves it: a base GGUF (plus the job's final
 * adapter or the checkpoint at step N) for the local engine, an OpenAI-compatible upstream, or a
 * vLLM upstream that loads the adapter's PEFT files at run time (`target.baseModel`).
 */
import path from "node:path";
import { adapterArtifactNames } from "../../sdk/api/jobs.js";
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { InferenceError, type Backend, type UpstreamLora } from "./types.js";

export async function resolveBackend(ctx: CloudContext, target: DeploymentTarget): Promise<Backend> {
  if (target.kind === "base_model") return baseModelBackend(ctx, target.name, null);
  const job = await ctx.db.selectFrom("jobs").select(["config"]).where("id", "=", target.jobId).executeTakeFirst();
  if (!job) throw unavailable(`job ${target.jobId} no longer exists`);
  if (target.baseModel !== undefined) return upstreamLoraBackend(ctx, target);
  const modelName = String((JSON.parse(job.config) as { model?: unknown }).model ?? "");
  const artifact = await ctx.db
    .selectFrom("artifacts")
    .select(["path"])
    .where("job_id", "=", target.jobId)
    .where("kind", "=", target.kind === "adapter" ? "adapter" : "checkpoint")
    .$if(target.kind === "checkpoint", (q) => q.where("step", "=", (target as { step: number }).step))
    .orderBy("step", "desc")
    .executeTakeFirst();
  if (!artifact) throw unavailable(`job ${target.jobId} has no ${adapterWords(target)}`);
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

/** The adapter's PEFT pair, to be copied into the upstream's shared folder and loaded there under `lora.name`. */
async function upstreamLoraBackend(ctx: CloudContext, target: Exclude<DeploymentTarget, { kind: "base_model" }>): Promise<Backend> {
  const baseName = target.baseModel ?? "";
  const model = await ctx.db.selectFrom("base_models").selectAll().where("name", "=", baseName).executeTakeFirst();
  if (!model) throw unavailable(`base model "${baseName}" is not registered on this cloud`);
  if (!model.upstream_url || !model.lora_dir) throw unavailable(`base model "${baseName}" is not a vLLM upstream with a shared adapter folder`);
  const step = target.kind === "checkpoint" ? target.step : undefined;
  const names = adapterArtifactNames(step);
  const rows = await ctx.db
    .selectFrom("artifacts")
    .select(["name", "path"])
    .where("job_id", "=", target.jobId)
    .where("name", "in", [names.weights, names.config])
    .execute();
  const file = (name: string) => rows.find((row) => row.name === name)?.path;
  const weightsFile = file(names.weights);
  const configFile = file(names.config);
  if (!weightsFile || !configFile) throw unavailable(`job ${target.jobId} has no PEFT files for its ${adapterWords(target)}`);
  const name = upstreamLoraName(target);
  const dirOnServer = model.lora_dir_on_server ?? model.lora_dir;
  const lora: UpstreamLora = {
    name,
    weightsFile,
    configFile,
    dir: path.join(model.lora_dir, name),
    // The server's folder may use another OS's separators; a plain "/" join is what vLLM's Linux hosts read.
    dirOnServer: `${dirOnServer.replace(/[\\/]+$/, "")}/${name}`,
  };
  return { kind: "upstream", baseUrl: model.upstream_url, model: name, lora };
}

/** The adapter's name on the upstream: one per adapter, not per deployment, so endpoints on one adapter share one load. */
export function upstreamLoraName(target: Exclude<DeploymentTarget, { kind: "base_model" }>): string {
  return `svc-${target.jobId}${target.kind === "checkpoint" ? `-step-${target.step}` : ""}`;
}

const adapterWords = (target: Exclude<DeploymentTarget, { kind: "base_model" }>) =>
  target.kind === "adapter" ? "a final adapter" : `a checkpoint at step ${target.step}`;

const unavailable = (message: string) => new InferenceError(503, "target_unavailable", `this deployment cannot be served: ${message}`);
