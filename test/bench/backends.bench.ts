/**
 * Compute backends side by side (issues 9, 14 and 25): LoRA training tokens/s and peak memory of the
 * tfjs backend, the torch backend (its 'auto' dtype) and a plain transformers + PEFT loop written
 * without svc (the anchor, engine/backends/torch/python/anchor.py, in the dtype and threads the
 * backend used), on the same model, batches, LoRA and machine, in one run.
 *
 *   quickstart (svc-tiny, its data)   tfjs · torch · anchor                goal: torch ≥ 3× tfjs, ≥ 0.8× anchor
 *   d=256 × 4 blocks, 8 × 160          tfjs · tfjs at 91e4272 · torch · anchor
 *                                      goals: torch ≥ 5× tfjs; tfjs ≥ 1.5× the engine of 91e4272 (before
 *                                      issue 14, test/bench/tfjsAtCommit.ts). anchor / tfjs says what the
 *                                      hardware allows: if a plain PyTorch loop is below 5× tfjs here, so
 *                                      is any backend that matches it.
 *   SmolLM2-135M shape, 2 × 256        torch · anchor                       goal: torch ≥ 0.9× anchor; bytes per base parameter
 *   Qwen3-0.6B shape, 2 × 256          torch · anchor                       the same
 *   Qwen3-0.6B shape, 1 × 256          torch on a BF16 file · torch on a Q4_K_M file kept quantised
 *                                      tokens/s ratio, bytes per base parameter and the Qwen3-4B shape's
 *                                      projected peak: goal ≤ 6 GB at ≥ 0.8× the bfloat16 speed
 *   Qwen3-4B shape, 1 × 256            torch (bf16, checkpointing)          goal: peak RSS ≤ 11 GB; opt-in: SVC_BENCH_QWEN3_4B=1
 *                                      and the same comparison as above on the 4B shape itself
 *
 * Ratios are what to read: absolute numbers depend on the machine and its load (on a shared
 * 2-core machine other processes' load moves them by 2x and more; compare lines of one run).
 * Peak RSS is the Python process's for torch and the anchor, this Node process's high-water mark
 * for tfjs (the workloads run smallest first, so each tfjs figure is that workload's peak). SVC_BENCH_QWEN3=0 skips the Qwen3-0.6B shape.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { TfjsBackend } from "../../engine/backends/tfjs.js";
import {
  benchAnchor,
  benchLine,
  benchTorchBackend,
  compareQuantizedBase,
  compareWithPlainLoop,
  measureQwen3FourBillionMemory,
  quickstartBatches,
  QWEN3_06B_SHAPE,
  QWEN3_4B_SHAPE,
  shapeCase,
  SMOLLM2_135M_SHAPE,
  timeTrainSteps,
  randomBatches,
  writeRandomModelGguf,
  type TorchBenchCase,
  type TorchBenchResult,
} from "../../engine/backends/torch/bench.js";
import { detectTorch } from "../../engine/backends/torch/index.js";
import { readModelConfig } from "../../engine/gguf/model-file.js";
import { llamaConfig, type ModelConfig } from "../../engine/model/config.js";
import { assertFits } from "../../engine/train/lora-trainer.js";
import { repoRoot } from "../support/cloud.js";
import { BEFORE_ISSUE_14, timeTfjsAtCommit } from "./tfjsAtCommit.js";

const D256_SHAPE: ModelConfig = llamaConfig({
  name: "d256x4",
  vocabSize: 262,
  contextLength: 160,
  embeddingLength: 256,
  blockCount: 4,
  headCount: 4,
  feedForwardLength: 1024,
});

/** The torch bench's workload on the tfjs backend, in this process. */
async function benchTfjs(c: TorchBenchCase): Promise<TorchBenchResult> {
  const backend = new TfjsBackend();
  try {
    const timing = await timeTrainSteps(backend, c);
    return { ...timing, peakRssBytes: process.resourceUsage().maxRSS * 1024, peakDeviceBytes: 0, device: backend.info.device, dtype: backend.info.dtype };
  } finally {
    await backend.dispose();
  }
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
function line(label: string, result: TorchBenchResult): void {
  console.log(
    label.padEnd(58),
    `${result.tokensPerSecond.toFixed(0)} tokens/s (${result.stepSeconds.toFixed(3)} s/step), peak RSS ${mib(result.peakRssBytes)}${result.peakDeviceBytes ? `, GPU ${mib(result.peakDeviceBytes)}` : ""} [${result.device}]`,
  );
}
const ratio = (label: string, a: TorchBenchResult, b: TorchBenchResult) => console.log(label.padEnd(58), (a.tokensPerSecond / b.tokensPerSecond).toFixed(2));

const found = await detectTorch();
if (!found.ok) console.log(`torch not available (${found.reason}): tfjs figures only`);
const python = found.ok ? found.python : "";
const lora = { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj", "o_proj"] };
const dir = await mkdtemp(path.join(tmpdir(), "svc-backends-bench-"));

async function workload(
  label: string,
  c: TorchBenchCase,
  which: { tfjs?: Partial<TorchBenchCase> | false; tfjsBefore?: boolean; anchor?: boolean },
): Promise<void> {
  let tfjs: TorchBenchResult | undefined;
  try {
    if (which.tfjs !== false) {
      const tfjsCase = { ...c, ...which.tfjs };
      assertFits(new TfjsBackend(), c.config, tfjsCase.batches[0].batchSize, tfjsCase.batches[0].length);
      tfjs = await benchTfjs(tfjsCase);
    }
  } catch (err) {
    console.log(`${label}: tfjs`.padEnd(58), `refused before loading: ${(err as Error).message}`);
  }
  if (tfjs) line(`${label}: tfjs`, tfjs);
  const before = which.tfjsBefore ? await timeTfjsAtCommit(BEFORE_ISSUE_14, c) : undefined;
  if (before && "reason" in before) console.log(`${label}: tfjs at ${BEFORE_ISSUE_14}`.padEnd(58), `not measured: ${before.reason}`);
  else if (before)
    console.log(
      `${label}: tfjs at ${BEFORE_ISSUE_14} (before issue 14)`.padEnd(58),
      `${before.tokensPerSecond.toFixed(0)} tokens/s (${before.stepSeconds.toFixed(3)} s/step)`,
    );
  if (tfjs && before && !("reason" in before))
    console.log(`${label}: ratio tfjs / tfjs at ${BEFORE_ISSUE_14}`.padEnd(58), (tfjs.tokensPerSecond / before.tokensPerSecond).toFixed(2));
  if (!python) return;
  const torch = await benchTorchBackend({ ...c, python });
  console.log(benchLine(`${label}: torch backend`, torch));
  const anchor = which.anchor ? await benchAnchor({ ...c, python }, torch) : undefined;
  if (anchor) console.log(benchLine(`${label}: plain transformers + PEFT loop`, { ...anchor, device: torch.device }));
  if (tfjs) ratio(`${label}: ratio torch / tfjs`, torch, tfjs);
  if (tfjs && anchor) ratio(`${label}: ratio anchor / tfjs (what the hardware allows)`, anchor, tfjs);
  if (anchor) ratio(`${label}: ratio torch / plain loop`, torch, anchor);
}

try {
  const tinyPath = path.join(repoRoot, "models", "svc-tiny.gguf");
  const tiny = await readModelConfig(tinyPath);
  await workload(
    "quickstart (svc-tiny)",
    { python, config: tiny, modelPath: tinyPath, batches: await quickstartBatches(tiny), lora, warmup: 3, steps: 20 },
    { anchor: true },
  );

  const d256Path = path.join(dir, "d256.gguf");
  await writeRandomModelGguf(d256Path, D256_SHAPE);
  await workload(
    "d=256 x 4 blocks, 8x160",
    { python, config: D256_SHAPE, modelPath: d256Path, batches: randomBatches(D256_SHAPE.vocabSize, 8, 160, 4), lora, warmup: 2, steps: 8 },
    { tfjsBefore: true, anchor: true },
  );

  // svc's torch backend in its best dtype against the plain transformers + PEFT loop on the same
  // shapes (goal >= 0.9x), and bytes per base parameter at peak RSS.
  if (python) {
    for (const shape of process.env.SVC_BENCH_QWEN3 === "0" ? [SMOLLM2_135M_SHAPE] : [SMOLLM2_135M_SHAPE, QWEN3_06B_SHAPE]) {
      const c = await shapeCase(python, dir, shape);
      await compareWithPlainLoop(`${shape.name}, 2x256`, c);
      await rm(c.modelPath, { force: true });
    }
  }
  // A Q4_K_M base kept quantised against the BF16 file of the same shape.
  if (python && process.env.SVC_BENCH_QWEN3 !== "0") await compareQuantizedBase(python, dir, QWEN3_06B_SHAPE);
  if (python && process.env.SVC_BENCH_QWEN3_4B === "1") {
    await measureQwen3FourBillionMemory(python, dir);
    await compareQuantizedBase(python, dir, QWEN3_4B_SHAPE, { steps: 1, checkpointActivations: true });
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
