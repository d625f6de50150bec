/**
 * Inference for the edge and the Playground: llama.cpp (node-llama-cpp) in a worker process,
 * never in the request loop; or an OpenAI-compatible upstream server.
 */
import type { CloudContext } from "../context.js";

export interface InferenceService {
  close(): Promise<void>;
}

export async function startInferenceService(_ctx: CloudContext): Promise<InferenceService> {
  return { close: async () => {} };
}
