/** One-line summary of a deployment target, worded exactly as SPEC section 2 lists it. */
import type { DeploymentTarget } from "../sdk/wire.js";

export function shortJobId(jobId: string): string {
  return jobId.slice(0, 8);
}

/** An adapter served by a vLLM upstream adds ` on <model>` to the spec's wording. */
export function targetSummary(target: DeploymentTarget): string {
  const on = target.kind !== "base_model" && target.baseModel ? ` on ${target.baseModel}` : "";
  switch (target.kind) {
    case "adapter":
      return `Final adapter (job ${shortJobId(target.jobId)})${on}`;
    case "checkpoint":
      return `Checkpoint step ${target.step} (job ${shortJobId(target.jobId)})${on}`;
    case "base_model":
      return `Base model: ${target.name}`;
  }
}
