/**
 * Keeps a vLLM upstream's run-time adapters in step with the deployments on them: a deployment
 * created, enabled or retargeted onto an adapter loads it; one deleted, disabled or retargeted away
 * unloads its old adapter once no other live deployment serves it on that base model.
 */
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { targetOf } from "../domain/deployments.js";
import { upstreamLoraName } from "./targets.js";
import type { Backend, UpstreamLora } from "./types.js";
import type { VllmAdapters } from "./vllmAdapters.js";

type LoraBackend = { baseUrl: string; lora: UpstreamLora };

export async function followDeploymentAdapters(
  ctx: CloudContext,
  adapters: VllmAdapters,
  resolve: (target: DeploymentTarget) => Promise<Backend>,
  /** What the deployment served before the change and serves after it; null for nothing (absent, deleted, disabled). */
  before: DeploymentTarget | null,
  after: DeploymentTarget | null,
): Promise<void> {
  const loraOf = async (target: DeploymentTarget | null): Promise<LoraBackend | null> => {
    if (!target || target.kind === "base_model" || target.baseModel === undefined) return null;
    const backend = await resolve(target).catch(() => null);
    return backend?.kind === "upstream" && backend.lora ? { baseUrl: backend.baseUrl, lora: backend.lora } : null;
  };
  const [old, next] = await Promise.all([loraOf(before), loraOf(after)]);
  const same = old && next && old.baseUrl === next.baseUrl && old.lora.name === next.lora.name;
  if (old && !same && !(await stillServed(ctx, before as Exclude<DeploymentTarget, { kind: "base_model" }>, old.lora.name))) {
    await adapters.unload(old.baseUrl, old.lora);
  }
  // A failed load is kept as the adapter's state (the endpoint page shows it) and tried again by the next chat.
  if (next) await adapters.ensureLoaded(next.baseUrl, next.lora).catch(() => undefined);
}

/** Whether a live, enabled deployment still serves the adapter named `name` on the same base model. */
async function stillServed(ctx: CloudContext, target: Exclude<DeploymentTarget, { kind: "base_model" }>, name: string): Promise<boolean> {
  const rows = await ctx.db
    .selectFrom("deployments")
    .select(["target_kind", "target_job_id", "target_step", "target_model"])
    .where("deleted_at", "is", null)
    .where("enabled", "=", 1)
    .where("target_model", "=", target.baseModel ?? "")
    .where("target_job_id", "=", target.jobId)
    .execute();
  return rows.some((row) => {
    const other = targetOf(row);
    return other.kind !== "base_model" && upstreamLoraName(other) === name;
  });
}
