/**
 * One job on two CPU ranks (torchrun, DDP over gloo, one thread each) against one process on one
 * thread, at the same 8-example step: training wall time per example. Goal (issue 29): two ranks
 * ≤ 0.6× one process's time per example on a 2-core machine.
 *
 *   quickstart (svc-tiny, its data, 8 a step)
 *   d=256 × 4 blocks, 8 × 160 random tokens
 *
 * Both backends stay loaded and are timed in alternating blocks of steps, so load on a shared
 * machine falls on both alike; each figure is the median of the blocks. Ratios are what to read.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { quickstartBatches, randomBatches, writeRandomModelGguf } from "../../engine/backends/torch/bench.js";
import { detectTorch, startTorchBackend, type TorchBackend } from "../../engine/backends/torch/index.js";
import type { TokenBatch } from "../../engine/backends/types.js";
import { readModelConfig } from "../../engine/gguf/model-file.js";
import { initLoraTensors, loraSpec } from "../../engine/lora.js";
import { llamaConfig, type ModelConfig } from "../../engine/model/config.js";
import { repoRoot } from "../support/cloud.js";

const D256_SHAPE: ModelConfig = llamaConfig({
  name: "d256x4",
  vocabSize: 262,
  contextLength: 160,
  embeddingLength: 256,
  blockCount: 4,
  headCount: 4,
  feedForwardLength: 1024,
});
const OPTIMIZER = { learningRate: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };
const lora = { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj", "o_proj"] };
const ROUNDS = Number(process.env.SVC_BENCH_ROUNDS || 5);

const found = await detectTorch();
if (!found.ok) {
  console.log(`torch not available (${found.reason}): nothing to measure`);
  process.exit(0);
}
const python = found.python;

async function loaded(modelPath: string, config: ModelConfig, ranks: boolean): Promise<TorchBackend> {
  const backend = await startTorchBackend({ python, threads: 1, dtype: "float32", ranks: ranks ? { perNode: 2, backend: "gloo" } : undefined });
  await backend.loadBase(modelPath, config);
  await backend.initLora(loraSpec(lora), initLoraTensors(config, lora, 1).tensors);
  return backend;
}

/** Seconds per example over `steps` steps. */
async function perExample(backend: TorchBackend, batches: TokenBatch[], steps: number): Promise<number> {
  let examples = 0;
  const started = performance.now();
  for (let i = 0; i < steps; i++) {
    const batch = batches[i % batches.length];
    await backend.trainStep(batch, OPTIMIZER);
    examples += batch.batchSize;
  }
  return (performance.now() - started) / 1000 / examples;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function workload(label: string, modelPath: string, config: ModelConfig, batches: TokenBatch[], steps: number): Promise<void> {
  const one = await loaded(modelPath, config, false);
  const two = await loaded(modelPath, config, true);
  try {
    await perExample(one, batches, 2);
    await perExample(two, batches, 2);
    const a: number[] = [];
    const b: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      a.push(await perExample(one, batches, steps));
      b.push(await perExample(two, batches, steps));
    }
    const [t1, t2] = [median(a), median(b)];
    console.log(
      label.padEnd(40),
      `1 rank ${(t1 * 1000).toFixed(1)} ms/example [${one.info.device}]`.padEnd(42),
      `2 ranks ${(t2 * 1000).toFixed(1)} ms/example [${two.info.device} × ${two.info.worldSize}]`.padEnd(48),
      `ratio ${(t2 / t1).toFixed(2)} (goal ≤ 0.60)`,
    );
  } finally {
    await Promise.all([one.dispose(), two.dispose()]);
  }
}

const dir = await mkdtemp(path.join(tmpdir(), "svc-ddp-bench-"));
try {
  const tinyPath = path.join(repoRoot, "models", "svc-tiny.gguf");
  const tiny = await readModelConfig(tinyPath);
  await workload("quickstart (svc-tiny), 8 a step", tinyPath, tiny, await quickstartBatches(tiny), 10);
  const d256Path = path.join(dir, "d256.gguf");
  await writeRandomModelGguf(d256Path, D256_SHAPE);
  await workload("d=256 x 4 blocks, 8x160", d256Path, D256_SHAPE, randomBatches(D256_SHAPE.vocabSize, 8, 160, 4), 4);
} finally {
  await rm(dir, { recursive: true, force: true });
}
