/**
 * One job on two CPU ranks (torchrun over gloo, one thread each), as DDP (each rank the whole base)
 * and as FSDP (the decoder layers sharded across the ranks), against one process on one thread, at
 * the same 8-example step: training wall time per example, and each process's peak RSS (VmHWM,
 * loading included). Goal (issue 29): DDP ≤ 0.6× one process's time per example on a 2-core
 * machine; FSDP trades time (a gather of each layer's weights per pass) for a smaller base per rank.
 *
 *   quickstart (svc-tiny, its data, 8 a step)
 *   d=256 × 4 blocks, 8 × 160 random tokens
 *   d=512 × 8 blocks, 8 × 64 random tokens (layers outweigh the embeddings: FSDP's share shows)
 *
 * Both backends stay loaded and are timed in alternating blocks of steps, so load on a shared
 * machine falls on both alike; each figure is the median of the blocks. Ratios are what to read.
 */
import { readFileSync } from "node:fs";
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
import { descendantPids } from "../support/processes.js";

const D256_SHAPE: ModelConfig = llamaConfig({
  name: "d256x4",
  vocabSize: 262,
  contextLength: 160,
  embeddingLength: 256,
  blockCount: 4,
  headCount: 4,
  feedForwardLength: 1024,
});
const D512_SHAPE: ModelConfig = llamaConfig({
  name: "d512x8",
  vocabSize: 262,
  contextLength: 64,
  embeddingLength: 512,
  blockCount: 8,
  headCount: 8,
  feedForwardLength: 2048,
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

type Layout = "1 process" | "DDP" | "FSDP";
const LAYOUTS: Layout[] = ["1 process", "DDP", "FSDP"];

async function loaded(modelPath: string, config: ModelConfig, layout: Layout): Promise<TorchBackend> {
  const ranks =
    layout === "1 process" ? undefined : { perNode: 2, backend: "gloo" as const, strategy: layout === "FSDP" ? ("fsdp" as const) : ("ddp" as const) };
  const backend = await startTorchBackend({ python, threads: 1, dtype: "float32", ranks });
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

/**
 * Each training process's peak RSS and its anonymous (private) part now, in MB: the one process, or
 * each rank under torchrun in rank order. A float32 GGUF's weights are read from the file's mapped
 * pages, which ranks share and RSS counts in each; FSDP's shards and gathered layers are private.
 */
function rssMb(backend: TorchBackend): { peak: number; anon: number }[] {
  const pids = (backend.info.worldSize ?? 1) > 1 ? descendantPids(backend.pid!, "svc_torch_server.py") : [backend.pid!];
  const ranked = pids.map((pid) => {
    const rank = Number(/(?:^|\0)RANK=(\d+)\0/.exec(readFileSync(`/proc/${pid}/environ`, "latin1"))?.[1] ?? 0);
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const mb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? 0) / 1024;
    return { rank, peak: mb("VmHWM"), anon: mb("RssAnon") };
  });
  return ranked.sort((a, b) => a.rank - b.rank);
}

async function workload(label: string, modelPath: string, config: ModelConfig, batches: TokenBatch[], steps: number): Promise<void> {
  const backends: TorchBackend[] = [];
  try {
    // One at a time, so each process's load peak is its own.
    for (const layout of LAYOUTS) backends.push(await loaded(modelPath, config, layout));
    for (const backend of backends) await perExample(backend, batches, 2);
    const times: number[][] = LAYOUTS.map(() => []);
    for (let round = 0; round < ROUNDS; round++) for (const [i, backend] of backends.entries()) times[i].push(await perExample(backend, batches, steps));
    const medians = times.map(median);
    console.log(`${label}:`);
    for (const [i, layout] of LAYOUTS.entries()) {
      const backend = backends[i];
      const ratio = i === 0 ? "" : `ratio ${(medians[i] / medians[0]).toFixed(2)}${layout === "DDP" ? " (goal ≤ 0.60)" : ""}`;
      const rss = rssMb(backend);
      const each = (pick: (r: { peak: number; anon: number }) => number) => rss.map((r) => pick(r).toFixed(0)).join(" + ");
      console.log(
        `  ${layout.padEnd(10)}`,
        `${(medians[i] * 1000).toFixed(1)} ms/example`.padEnd(18),
        ratio.padEnd(24),
        `peak RSS ${each((r) => r.peak)} MB`.padEnd(28),
        `anon now ${each((r) => r.anon)} MB`.padEnd(28),
        `parameters held ${(backend.rankParameterBytes / 2 ** 20).toFixed(1)} MB (rank 0) [${backend.info.device}${i ? ` × ${backend.info.worldSize}` : ""}]`,
      );
    }
  } finally {
    await Promise.all(backends.map((b) => b.dispose()));
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
  const d512Path = path.join(dir, "d512.gguf");
  await writeRandomModelGguf(d512Path, D512_SHAPE);
  await workload("d=512 x 8 blocks, 8x64", d512Path, D512_SHAPE, randomBatches(D512_SHAPE.vocabSize, 8, 64, 4), 2);
} finally {
  await rm(dir, { recursive: true, force: true });
}
