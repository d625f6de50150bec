/**
 * Torch backend benchmark: LoRA training tokens/s through svc's torch backend (TS client, framed
 * protocol, svc_torch's model) against a plain hand-written PyTorch LoRA loop (python/anchor.py)
 * on the same batch shapes, threads and device; plus the peak RSS of each Python process.
 *
 * Two workloads: the quickstart (svc-tiny, its data and batch size) and a SmolLM2-135M-shaped
 * random model (d 576, 30 blocks, 9 heads / 3 kv heads, ff 1536, vocab 49152, tied output;
 * batch 4 × 256). SVC_BENCH_TORCH_BLOCKS overrides the block count on slow machines,
 * SVC_BENCH_TORCH_STEPS the timed steps; SVC_BENCH_TORCH_05B=1 adds the peak memory of a
 * Qwen2.5-0.5B-shaped step (slow on CPU). Run: `tsx engine/backends/torch/bench.ts`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../packageRoot.js';
import { readChatJsonl, tokenizeExamples } from '../../data/chat-jsonl.js';
import { modelMetadata, readModelConfig } from '../../gguf/model-file.js';
import { writeGgufFile } from '../../gguf/writer.js';
import { initLoraTensors, loraSpec, type LoraConfig } from '../../lora.js';
import { llamaConfig, type ModelConfig } from '../../model/config.js';
import { weightShapes } from '../../model/weights.js';
import { SeededRandom } from '../../random.js';
import { packBatch } from '../../train/batches.js';
import { QUICKSTART_HYPERPARAMETERS as QS } from '../../train/quickstart.js';
import type { ComputeBackend, OptimizerSettings, TokenBatch } from '../types.js';
import { detectTorch, startTorchBackend } from './index.js';
import { torchPythonPath } from './paths.js';
import { torchProcessEnv } from './env.js';

export interface TorchBenchResult {
  tokensPerSecond: number;
  stepSeconds: number;
  peakRssBytes: number;
  peakDeviceBytes: number;
  device: string;
  dtype: string;
}

export interface TorchBenchCase {
  python: string;
  config: ModelConfig;
  modelPath: string;
  batches: TokenBatch[];
  lora: LoraConfig;
  warmup: number;
  steps: number;
  device?: string;
  /** The backend's default is 'auto'; false keeps every activation, as the anchor does. */
  checkpointActivations?: boolean | 'auto';
}

const OPTIMIZER: OptimizerSettings = { learningRate: 1e-4, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };

export const SMOLLM2_135M_SHAPE: ModelConfig = llamaConfig({
  name: 'smollm2-135m-shaped', vocabSize: 49152, contextLength: 2048, embeddingLength: 576, blockCount: 30,
  headCount: 9, headCountKv: 3, feedForwardLength: 1536, ropeFreqBase: 100000, tiedOutput: true,
});

/** Qwen2.5-0.5B's shape (bias, NEOX, GQA 14/2, tied 152k vocabulary): the memory target is 8 GB. */
export const QWEN25_05B_SHAPE: ModelConfig = llamaConfig({
  name: 'qwen2.5-0.5b-shaped', architecture: 'qwen2', vocabSize: 151936, contextLength: 32768, embeddingLength: 896, blockCount: 24,
  headCount: 14, headCountKv: 2, feedForwardLength: 4864, ropeFreqBase: 1000000, rmsNormEpsilon: 1e-6, ropeStyle: 'neox', attentionBias: true, tiedOutput: true,
});

/** The quickstart's training data packed as the trainer packs it (batches in file order). */
export async function quickstartBatches(config: ModelConfig): Promise<TokenBatch[]> {
  const file = path.join(packageRoot(), 'examples', 'quickstart', 'data', 'train.jsonl');
  const chats = tokenizeExamples(await readChatJsonl(file, { contextLength: config.contextLength }), config.contextLength);
  const batches: TokenBatch[] = [];
  for (let i = 0; i + QS.batchSize <= chats.length; i += QS.batchSize) batches.push(packBatch(chats.slice(i, i + QS.batchSize)));
  return batches;
}

export function randomBatches(vocab: number, batchSize: number, length: number, count: number, seed = 1): TokenBatch[] {
  const random = new SeededRandom(seed);
  return Array.from({ length: count }, () => {
    const size = batchSize * length;
    const inputs = Int32Array.from({ length: size }, () => random.int(vocab));
    const targets = Int32Array.from({ length: size }, () => random.int(vocab));
    return { batchSize, length, inputs, targets, mask: new Float32Array(size).fill(1), maskedTokens: size, tokens: size };
  });
}

/** A GGUF of the config's shape with small random weights (a tiled random pool: fast to make). */
export async function writeRandomModelGguf(file: string, config: ModelConfig): Promise<void> {
  const pool = new SeededRandom(3).normalArray(1 << 20, 0.02);
  const tensors = weightShapes(config).map(([name, shape]) => {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(size);
    if (name.endsWith('norm.weight')) data.fill(1);
    else for (let i = 0; i < size; i += pool.length) data.set(pool.subarray(0, Math.min(pool.length, size - i)), i);
    // GGUF dims are ne0 first: the row length. tfjs shapes here are [in, out] for linears, which
    // ggml stores as ne = [in, out]; other 2-D tensors ([vocab, d]) as ne = [d, vocab].
    const dims = shape.length === 1 ? shape : name === 'token_embd.weight' ? [shape[1], shape[0]] : shape;
    return { name, dims, data };
  });
  await writeGgufFile(file, { metadata: new Map(modelMetadata(config)), tensors });
}

/** Loads the case's model on `backend`, then times its training steps (after `warmup` untimed ones). */
export async function timeTrainSteps(backend: ComputeBackend, c: Omit<TorchBenchCase, 'python'>): Promise<{ tokensPerSecond: number; stepSeconds: number }> {
  await backend.loadBase(c.modelPath, c.config);
  await backend.initLora(loraSpec(c.lora), initLoraTensors(c.config, c.lora, 1).tensors);
  let tokens = 0;
  let started = 0;
  for (let i = 0; i < c.warmup + c.steps; i++) {
    if (i === c.warmup) started = performance.now();
    const batch = c.batches[i % c.batches.length];
    await backend.trainStep(batch, OPTIMIZER);
    if (i >= c.warmup) tokens += batch.tokens;
  }
  const seconds = (performance.now() - started) / 1000;
  return { tokensPerSecond: tokens / seconds, stepSeconds: seconds / c.steps };
}

export async function benchTorchBackend(c: TorchBenchCase): Promise<TorchBenchResult> {
  const backend = await startTorchBackend({ python: c.python, device: c.device, checkpointActivations: c.checkpointActivations });
  try {
    const timing = await timeTrainSteps(backend, c);
    const memory = await backend.memory();
    return { ...timing, ...memory, device: backend.info.device, dtype: backend.info.dtype };
  } finally {
    await backend.dispose();
  }
}

/** The same workload through python/anchor.py, a plain PyTorch loop with nothing of svc in it. */
export function benchAnchor(c: TorchBenchCase): Promise<TorchBenchResult> {
  const targets = loraSpec(c.lora).targets;
  const job = {
    config: c.config, shapes: c.batches.map((b) => [b.batchSize, b.length, b.tokens]), steps: c.steps, warmup: c.warmup,
    lora: { r: c.lora.r, alpha: c.lora.alpha, targets }, device: c.device,
  };
  return new Promise((resolve, reject) => {
    const child = execFile(c.python, [path.join(torchPythonPath(), 'anchor.py')], { maxBuffer: 1 << 20, env: torchProcessEnv() }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`anchor failed: ${error.message}\n${stderr}`));
      const result = JSON.parse(stdout.trim().split('\n').pop()!);
      resolve({ ...result, device: result.device === 'cpu' ? `cpu` : result.device });
    });
    child.stdin!.end(JSON.stringify(job));
  });
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;

function report(label: string, svc: TorchBenchResult, anchor: TorchBenchResult): void {
  console.log(`${label}: torch backend`.padEnd(52), `${svc.tokensPerSecond.toFixed(0)} tokens/s (${svc.stepSeconds.toFixed(3)} s/step) on ${svc.device}, ${svc.dtype}; peak RSS ${mib(svc.peakRssBytes)}${svc.peakDeviceBytes ? `, GPU ${mib(svc.peakDeviceBytes)}` : ''}`);
  console.log(`${label}: plain PyTorch loop (anchor)`.padEnd(52), `${anchor.tokensPerSecond.toFixed(0)} tokens/s (${anchor.stepSeconds.toFixed(3)} s/step); peak RSS ${mib(anchor.peakRssBytes)}${anchor.peakDeviceBytes ? `, GPU ${mib(anchor.peakDeviceBytes)}` : ''}`);
  console.log(`${label}: ratio backend / anchor`.padEnd(52), (svc.tokensPerSecond / anchor.tokensPerSecond).toFixed(3));
}

/** Both workloads, printed as `npm run bench` prints its other measurements. */
/**
 * Peak RSS of a Qwen2.5-0.5B-shaped LoRA step at batch 4 × 256 (q, v, o; r 8): the number that
 * must stay under 8 GB. Slow on a small CPU (a 2 GB model file, minutes a step), so opt-in.
 */
export async function measureHalfBillionMemory(python: string, device?: string): Promise<TorchBenchResult> {
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-torch-bench-'));
  try {
    const modelPath = path.join(dir, 'qwen-shaped.gguf');
    await writeRandomModelGguf(modelPath, QWEN25_05B_SHAPE);
    const batches = randomBatches(QWEN25_05B_SHAPE.vocabSize, 4, 256, 1);
    return await benchTorchBackend({ python, config: QWEN25_05B_SHAPE, modelPath, batches, lora: QS.lora, warmup: 0, steps: 1, device });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function runTorchBench(options: { python?: string; device?: string; blocks?: number; steps?: number; halfBillion?: boolean } = {}): Promise<void> {
  const found = options.python ? { ok: true as const, python: options.python } : await detectTorch();
  if (!found.ok) {
    console.log(`torch backend bench skipped: ${found.reason}`);
    return;
  }
  const python = found.python;
  const quickstartModel = path.join(packageRoot(), 'models', 'svc-tiny.gguf');
  const tiny = await readModelConfig(quickstartModel);
  const quick: TorchBenchCase = { python, config: tiny, modelPath: quickstartModel, batches: await quickstartBatches(tiny), lora: QS.lora, warmup: 3, steps: options.steps ?? 30, device: options.device };
  report('quickstart (svc-tiny)', await benchTorchBackend(quick), await benchAnchor(quick));

  const config = { ...SMOLLM2_135M_SHAPE, blockCount: options.blocks ?? SMOLLM2_135M_SHAPE.blockCount };
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-torch-bench-'));
  try {
    const modelPath = path.join(dir, 'smollm2-shaped.gguf');
    await writeRandomModelGguf(modelPath, config);
    const smol: TorchBenchCase = { python, config, modelPath, batches: randomBatches(config.vocabSize, 4, 256, 2), lora: QS.lora, warmup: 1, steps: Math.max(2, Math.round((options.steps ?? 30) / 6)), device: options.device };
    const label = `SmolLM2-135M shape (${config.blockCount} blocks, 4x256)`;
    const keepAll = await benchTorchBackend({ ...smol, checkpointActivations: false });
    const byDefault = await benchTorchBackend(smol);
    report(label, keepAll, await benchAnchor(smol));
    console.log(`${label}: torch backend, default 'auto' checkpointing`.padEnd(52), `${byDefault.tokensPerSecond.toFixed(0)} tokens/s (${byDefault.stepSeconds.toFixed(3)} s/step); peak RSS ${mib(byDefault.peakRssBytes)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  if (options.halfBillion) {
    const big = await measureHalfBillionMemory(python, options.device);
    console.log('Qwen2.5-0.5B shape, LoRA step 4x256: torch backend'.padEnd(52), `${big.stepSeconds.toFixed(1)} s/step on ${big.device}; peak RSS ${mib(big.peakRssBytes)}${big.peakDeviceBytes ? `, GPU ${mib(big.peakDeviceBytes)}` : ''}`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const env = process.env;
  await runTorchBench({
    blocks: env.SVC_BENCH_TORCH_BLOCKS ? Number(env.SVC_BENCH_TORCH_BLOCKS) : undefined,
    steps: env.SVC_BENCH_TORCH_STEPS ? Number(env.SVC_BENCH_TORCH_STEPS) : undefined,
    device: env.SVC_TORCH_DEVICE,
    halfBillion: env.SVC_BENCH_TORCH_05B === '1',
  });
}
