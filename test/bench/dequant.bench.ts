/**
 * Kept-quantised weights (issue 25): one 9728 × 2560 weight (a Qwen3-4B MLP projection) dequantised
 * to bfloat16 per block type, by torch's dequantisers and by the native kernel (into a new tensor,
 * and into a reused one as the layers' pool gives), against the bfloat16 matmul of 256 tokens that
 * weight feeds: the native kernel's share of a training pass is the ratio to read.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { torchPythonPath } from "../../engine/backends/torch/paths.js";
import { detectTorch } from "../../engine/backends/torch/index.js";

const found = await detectTorch();
if (!found.ok) {
  console.log(`dequant: skipped (${found.reason})`);
  process.exit(0);
}
const { stdout } = await promisify(execFile)(found.python, [path.join(import.meta.dirname, "dequant_bench.py")], {
  env: { ...process.env, PYTHONPATH: torchPythonPath() },
  maxBuffer: 1 << 20,
});
const result = JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}");
console.log(`dequant 9728x2560 to bfloat16, ${result.threads} threads; ${result.native}`);
for (const type of ["Q8_0", "Q4_K", "Q6_K"]) {
  const r = result[type];
  console.log(
    `  ${type.padEnd(5)} torch ${r.torch.toFixed(1)} ms, native ${r.nativeNew.toFixed(1)} ms (new tensor) / ${r.nativeReused.toFixed(1)} ms (reused):`,
    `${(r.torch / r.nativeReused).toFixed(1)}x faster; the matmul it feeds (256 tokens) ${r.bf16Matmul256.toFixed(1)} ms`,
  );
}
