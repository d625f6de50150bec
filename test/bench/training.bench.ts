/**
 * Training benchmark (issue 3): LoRA training throughput on the quickstart configuration in
 * tokens/s, and the fraction of this machine's wasm matmul peak (measured in the same run) that
 * it reaches.
 */
import path from "node:path";
import { measureLoraThroughput, measureMatmulPeak } from "./loraThroughput.js";
import { repoRoot } from "../support/cloud.js";

const peak = await measureMatmulPeak();
for (const { size, gflops } of peak.bySize) console.log(`wasm matmul ${size}x${size}`.padEnd(44), `${gflops.toFixed(2)} GFLOP/s`);
const lora = await measureLoraThroughput({
  baseModelPath: path.join(repoRoot, "models", "svc-tiny.gguf"),
  trainPath: path.join(repoRoot, "examples", "quickstart", "data", "train.jsonl"),
  steps: 30,
  peakGflops: peak.peakGflops,
});
console.log(
  "LoRA training, quickstart config".padEnd(44),
  `${lora.tokensPerSecond.toFixed(0)} tokens/s over ${lora.steps} steps (${lora.wallSeconds.toFixed(1)} s)`,
);
console.log(
  "achieved vs matmul peak".padEnd(44),
  `${lora.achievedGflops.toFixed(2)} GFLOP/s | baseline wasm matmul peak: ${peak.peakGflops.toFixed(2)} GFLOP/s | ratio ${(lora.fractionOfPeak ?? 0).toFixed(3)}`,
);
