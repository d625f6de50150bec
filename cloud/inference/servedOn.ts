/** What answers a deployment's target, for its endpoint page: llama.cpp on its device, or the upstream server. */
import type { ServedOn } from "../../sdk/api/deployments.js";
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { InferenceService } from "./index.js";

/** Undefined when the target cannot be served now (its model gone): the page then shows no engine. */
export async function servedOn(inference: InferenceService, target: DeploymentTarget): Promise<ServedOn | undefined> {
  try {
    const backend = await inference.resolve(target);
    if (backend.kind === "local") return { engine: "llama.cpp", device: inference.device };
    const adapter = inference.upstreamAdapter(backend);
    return { engine: "upstream", url: backend.baseUrl, ...(adapter ? { adapter } : {}) };
  } catch {
    return undefined;
  }
}
