/** One-line summary of a deployment target, worded exactly as SPEC section 2 lists it. */
import type { DeploymentTarget } from "../sdk/wire.js";

export function shortJobId(jobId: string): string {
  return jobId.slice(0, 8);
}

export function targetSummary(target: DeploymentTarget): string {
  switch (target.kind) {
    case "adapter":
      return `Final adapter (job ${shortJobId(target.jobId)})`;
    case "checkpoint":
      return `Checkpoint step ${target.step} (job ${shortJobId(target.jobId)})`;
    case "base_model":
      return `Base model: ${target.name}`;
  }
}
