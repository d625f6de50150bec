/**
 * Torch backend benchmark: LoRA training tokens/s through svc's torch backend (TS client, framed
 * protocol, svc_torch) as a ratio of a plain transformers + PEFT loop (python/anchor.py:
 * AutoModelForCausalLM.from_config, get_peft_model, AdamW) on the same shape, batches, LoRA, dtype
 * (svc's 'auto' choice) and threads, measured in the same run; plus each side's peak RSS and
 * bytes per base parameter. test/bench/backends.bench.ts drives it for `npm run bench`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRoot } from '../../packageRoot.js';
import { readChatJsonl, tokenizeExamples } from '../../data/chat-jsonl.js';
import { modelMetadata } from '../../gguf/model-file.js';
import { writeGgufFile } from '../../gguf/writer.js';
import { GgmlType } from '../../gguf/ggml-types.js';
import { initLoraTensors, loraSpec, type LoraConfig } from '../../lora.js';
import { llamaConfig, type ModelConfig } from '../../model/config.js';
import { weightShapes } from '../../model/weights.js';
import { SeededRandom } from '../../random.js';
import { packBatch } from '../../train/batches.js';
import { QUICKSTART_HYPERPARAMETERS as QS } from '../../train/quickstart.js';
import type { ComputeBackend, OptimizerSettings, TokenBatch } from '../types.js';
import { detectTorch, startTorchBackend, type TorchDtype } from './index.js';
import { torchPythonPath } from './paths.js';
import { torchProcessEnv } from './env.js';

export interface TorchBenchResult {
  tokensPerSecond: number;
  stepSeconds: number;
  peakRssBytes: number;
  peakDeviceBytes: number;
  device: string;
  dtype: string;
  /** Elements of the base model (0 where unknown, e.g. tfjs). */
  parameters?: number;
  threads?: number;
  checkpointing?: boolean;
  /** Bytes the base takes in memory once loaded (torch). */
  baseBytes?: number;
  /** What dequantised kept-quantised weights (torch on the CPU). */
  dequantizer?: string;
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
  dtype?: TorchDtype;
  /** The backend's default is 'keep' (a quantised base stays quantised in memory). */
  quantizedBase?: 'keep' | 'dequantize';
}

const OPTIMIZER: OptimizerSettings = { learningRate: 1e-4, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };

export const SMOLLM2_135M_SHAPE: ModelConfig = llamaConfig({
  name: 'smollm2-135m-shaped',
  vocabSize: 49152,
  contextLength: 2048,
  embeddingLength: 576,
  blockCount: 30,
  headCount: 9,
  headCountKv: 3,
  feedForwardLength: 1536,
  ropeFreqBase: 100000,
  tiedOutput: true,
});

export const QWEN3_06B_SHAPE: ModelConfig = llamaConfig({
  name: 'qwen3-0.6b-shaped',
  architecture: 'qwen3',
  vocabSize: 151936,
  contextLength: 40960,
  embeddingLength: 1024,
  blockCount: 28,
  headCount: 16,
  headCountKv: 8,
  headDim: 128,
  feedForwardLength: 3072,
  ropeFreqBase: 1000000,
  rmsNormEpsilon: 1e-6,
  ropeStyle: 'neox',
  qkNorm: true,
  tiedOutput: true,
});

export const QWEN3_4B_SHAPE: ModelConfig = llamaConfig({
  name: 'qwen3-4b-shaped',
  architecture: 'qwen3',
  vocabSize: 151936,
  contextLength: 40960,
  embeddingLength: 2560,
  blockCount: 36,
  headCount: 32,
  headCountKv: 8,
  headDim: 128,
  feedForwardLength: 9728,
  ropeFreqBase: 1000000,
  rmsNormEpsilon: 1e-6,
  ropeStyle: 'neox',
  qkNorm: true,
  tiedOutput: true,
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

/**
 * A GGUF of the config's shape with small random weights (a tiled random pool: fast to make);
 * `type` stores the 2-D ones as BF16 (half the file). Every tensor is a view of one shared array
 * of the largest tensor's size, so a 4B shape is written holding that array and one tensor's bytes.
 * `q4_k_m` stores them as llama.cpp's Q4_K_M mostly does: Q4_K projections, ffn_down and the
 * embeddings in Q6_K.
 */
export async function writeRandomModelGguf(file: string, config: ModelConfig, type?: 'bf16' | 'q4_k_m'): Promise<void> {
  const pool = new SeededRandom(3).normalArray(1 << 20, 0.02);
  const shapes = weightShapes(config);
  const largest = Math.max(...shapes.map(([, shape]) => shape.reduce((a, b) => a * b, 1)));
  const shared = new Float32Array(largest);
  for (let i = 0; i < largest; i += pool.length) shared.set(pool.subarray(0, Math.min(pool.length, largest - i)), i);
  const ones = new Float32Array(Math.max(...shapes.filter(([, s]) => s.length === 1).map(([, s]) => s[0]), 1)).fill(1);
  const tensors = shapes.map(([name, shape]) => {
    const size = shape.reduce((a, b) => a * b, 1);
    const data = name.endsWith('norm.weight') ? ones.subarray(0, size) : shared.subarray(0, size);
    // GGUF dims are ne0 first: the row length. tfjs shapes here are [in, out] for linears, which
    // ggml stores as ne = [in, out]; other 2-D tensors ([vocab, d]) as ne = [d, vocab].
    const dims = shape.length === 1 ? shape : name === 'token_embd.weight' ? [shape[1], shape[0]] : shape;
    return { name, dims, data, ...(shape.length === 2 && type ? { type: storedType(name, type) } : {}) };
  });
  await writeGgufFile(file, { metadata: new Map(modelMetadata(config)), tensors });
}

function storedType(name: string, type: 'bf16' | 'q4_k_m'): GgmlType {
  if (type === 'bf16') return GgmlType.BF16;
  return name.startsWith('blk.') && !name.endsWith('ffn_down.weight') ? GgmlType.Q4_K : GgmlType.Q6_K;
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
  const backend = await startTorchBackend({
    python: c.python,
    device: c.device,
    checkpointActivations: c.checkpointActivations,
    dtype: c.dtype,
    quantizedBase: c.quantizedBase,
  });
  try {
    const timing = await timeTrainSteps(backend, c);
    const memory = await backend.memory();
    return {
      ...timing,
      ...memory,
      device: backend.info.device,
      dtype: backend.info.dtype,
      parameters: backend.parameters,
      baseBytes: backend.baseBytes,
      dequantizer: backend.dequantizer,
      threads: Number(backend.hello.threads),
    };
  } finally {
    await backend.dispose();
  }
}

/** transformers' config for a llama-family ModelConfig (what AutoConfig.for_model takes). */
export function hfConfig(config: ModelConfig): Record<string, unknown> {
  return {
    model_type: config.architecture,
    vocab_size: config.vocabSize,
    hidden_size: config.embeddingLength,
    num_hidden_layers: config.blockCount,
    num_attention_heads: config.headCount,
    num_key_value_heads: config.headCountKv,
    head_dim: config.headDim,
    intermediate_size: config.feedForwardLength,
    rms_norm_eps: config.rmsNormEpsilon,
    max_position_embeddings: config.contextLength,
    tie_word_embeddings: config.tiedOutput,
    ...(config.architecture === 'llama' ? { attention_bias: config.attentionBias } : {}),
  };
}

/**
 * The same workload through python/anchor.py, a plain transformers + PEFT loop with nothing of
 * svc in it, in the dtype, threads and checkpointing svc's backend ran with (`like`).
 */
export function benchAnchor(c: TorchBenchCase, like: Pick<TorchBenchResult, 'dtype' | 'threads' | 'checkpointing'>): Promise<TorchBenchResult> {
  const job = {
    hf_config: hfConfig(c.config),
    shapes: c.batches.map((b) => [b.batchSize, b.length]),
    steps: c.steps,
    warmup: c.warmup,
    lora: { r: c.lora.r, alpha: c.lora.alpha, target_modules: c.lora.targetModules },
    device: c.device,
    dtype: like.dtype,
    threads: like.threads,
    checkpointing: like.checkpointing ?? false,
  };
  return new Promise((resolve, reject) => {
    const child = execFile(c.python, [path.join(torchPythonPath(), 'anchor.py')], { maxBuffer: 1 << 20, env: torchProcessEnv() }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`anchor failed: ${error.message}\n${stderr}`));
      resolve({ ...JSON.parse(stdout.trim().split('\n').pop()!), checkpointing: job.checkpointing });
    });
    child.stdin!.end(JSON.stringify(job));
  });
}

const gb = (bytes: number) => `${(bytes / 1e9).toFixed(2)} GB`;

/** One line per side: tokens/s, peak memory, bytes per base parameter. */
export function benchLine(label: string, r: TorchBenchResult): string {
  const perParameter = r.parameters ? `, ${(r.peakRssBytes / r.parameters).toFixed(1)} bytes/parameter at peak RSS` : '';
  const gpu = r.peakDeviceBytes
    ? `, GPU ${gb(r.peakDeviceBytes)}${r.parameters ? ` (${(r.peakDeviceBytes / r.parameters).toFixed(1)} bytes/parameter)` : ''}`
    : '';
  return `${label.padEnd(58)} ${r.tokensPerSecond.toFixed(0)} tokens/s (${r.stepSeconds.toFixed(2)} s/step), ${r.dtype}${r.checkpointing ? ', checkpointing' : ''}; peak RSS ${gb(r.peakRssBytes)}${perParameter}${gpu} [${r.device}]`;
}

/** svc's backend, then the plain loop like it, on one workload; prints both and their ratio. */
export async function compareWithPlainLoop(label: string, c: TorchBenchCase): Promise<{ svc: TorchBenchResult; plain: TorchBenchResult }> {
  const svc = await benchTorchBackend(c);
  console.log(benchLine(`${label}: torch backend`, svc));
  const plain = await benchAnchor(c, svc);
  console.log(benchLine(`${label}: plain transformers + PEFT loop`, { ...plain, device: svc.device }));
  console.log(`${label}: ratio torch backend / plain loop`.padEnd(58), (svc.tokensPerSecond / plain.tokensPerSecond).toFixed(2), '(goal >= 0.9)');
  return { svc, plain };
}

/** A random-weight model of `config` written as a BF16 GGUF, trained on random 2-row batches of `length` tokens. */
export async function shapeCase(
  python: string,
  dir: string,
  config: ModelConfig,
  options: { batchSize?: number; length?: number; steps?: number; warmup?: number; device?: string } = {},
): Promise<TorchBenchCase> {
  const modelPath = path.join(dir, `${config.name}.gguf`);
  await writeRandomModelGguf(modelPath, config, 'bf16');
  const batches = randomBatches(config.vocabSize, options.batchSize ?? 2, options.length ?? 256, 2);
  return { python, config, modelPath, batches, lora: DEFAULT_LORA, warmup: options.warmup ?? 1, steps: options.steps ?? 3, device: options.device };
}

/**
 * A Qwen3-4B-shaped model (bfloat16 base, activation checkpointing, batch 1 x 256): the peak RSS
 * of every svc process must stay at or under 11 GB. Minutes on a small CPU (an 8 GB file), so opt-in.
 */
export async function measureQwen3FourBillionMemory(python: string, dir: string, device?: string): Promise<TorchBenchResult> {
  const c = await shapeCase(python, dir, QWEN3_4B_SHAPE, { batchSize: 1, warmup: 0, steps: 1, device });
  try {
    const result = await benchTorchBackend({ ...c, dtype: 'bfloat16', checkpointActivations: true });
    console.log(benchLine('qwen3-4b-shaped, 1x256: torch backend', result));
    // The Python process holds the model; the trainer's side (here this process) the batches and the LoRA's start.
    const node = process.memoryUsage().rss;
    console.log(
      "qwen3-4b-shaped, 1x256: peak RSS of svc's processes".padEnd(58),
      `${gb(result.peakRssBytes + node)} (Python ${gb(result.peakRssBytes)} + the trainer's side ${gb(node)}; goal <= 11 GB)`,
    );
    return result;
  } finally {
    await rm(c.modelPath, { force: true });
  }
}

/**
 * A quantised base kept quantised against the same shape in bfloat16, in one run: tokens/s and
 * bytes per base parameter at peak RSS of each, their ratios, and what the base itself takes in
 * memory (per parameter, and scaled to the Qwen3-4B shape). Goal on the 4B shape: <= 6 GB at
 * >= 0.8x the bfloat16 speed.
 */
export async function compareQuantizedBase(
  python: string,
  dir: string,
  config: ModelConfig,
  options: { batchSize?: number; length?: number; steps?: number; device?: string; checkpointActivations?: boolean | 'auto' } = {},
): Promise<{ bf16: TorchBenchResult; kept: TorchBenchResult }> {
  const label = `${config.name}, ${options.batchSize ?? 1}x${options.length ?? 256}`;
  const c = await shapeCase(python, dir, config, { batchSize: 1, length: 256, ...options, warmup: 1 });
  const quantizedPath = path.join(dir, `${config.name}.q4_k_m.gguf`);
  try {
    const run = { ...c, dtype: 'bfloat16' as const, checkpointActivations: options.checkpointActivations ?? c.checkpointActivations };
    const bf16 = await benchTorchBackend(run);
    console.log(benchLine(`${label}: torch backend, BF16 file`, bf16));
    await rm(c.modelPath, { force: true });
    await writeRandomModelGguf(quantizedPath, config, 'q4_k_m');
    const kept = await benchTorchBackend({ ...run, modelPath: quantizedPath, quantizedBase: 'keep' });
    console.log(benchLine(`${label}: torch backend, Q4_K_M file kept quantised`, kept), kept.dequantizer ?? '');
    console.log(
      `${label}: kept Q4_K_M / BF16`.padEnd(58),
      `${(kept.tokensPerSecond / bf16.tokensPerSecond).toFixed(2)}x the tokens/s (goal >= 0.8), ${(kept.peakRssBytes / bf16.peakRssBytes).toFixed(2)}x the peak RSS`,
    );
    // The base scales with the model; the rest of the peak (runtime, logits, activations) much less.
    for (const [name, r] of [
      ['BF16', bf16],
      ['Q4_K_M kept', kept],
    ] as const) {
      const perParameter = (r.baseBytes ?? 0) / (r.parameters || 1);
      console.log(
        `${label}: ${name} base in memory`.padEnd(58),
        `${gb(r.baseBytes ?? 0)} (${perParameter.toFixed(2)} bytes/parameter; the Qwen3-4B shape's: ${gb(perParameter * QWEN3_4B_PARAMETERS)}), the rest of the peak ${gb(r.peakRssBytes - (r.baseBytes ?? 0))}`,
      );
    }
    return { bf16, kept };
  } finally {
    await rm(c.modelPath, { force: true });
    await rm(quantizedPath, { force: true });
  }
}

/** Elements of the Qwen3-4B shape's weights (tied output counted once). */
export const QWEN3_4B_PARAMETERS = weightShapes(QWEN3_4B_SHAPE).reduce((sum, [, shape]) => sum + shape.reduce((a, b) => a * b, 1), 0);

/** svc's default LoRA (every attention and MLP projection, r 8, alpha 16). */
export const DEFAULT_LORA: LoraConfig = { r: 8, alpha: 16, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };

/** SmolLM2-135M and Qwen3-0.6B shapes at 2 x 256 against the plain loop. */
export async function runTorchBench(options: { python?: string; device?: string; steps?: number } = {}): Promise<void> {
  const found = options.python ? { ok: true as const, python: options.python } : await detectTorch();
  if (!found.ok) {
    console.log(`torch backend bench skipped: ${found.reason}`);
    return;
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'svc-torch-bench-'));
  try {
    for (const shape of [SMOLLM2_135M_SHAPE, QWEN3_06B_SHAPE]) {
      const c = await shapeCase(found.python, dir, shape, { steps: options.steps, device: options.device });
      await compareWithPlainLoop(`${shape.name}, 2x256`, c);
      await rm(c.modelPath, { force: true });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const env = process.env;
  await runTorchBench({ steps: env.SVC_BENCH_TORCH_STEPS ? Number(env.SVC_BENCH_TORCH_STEPS) : undefined, device: env.SVC_TORCH_DEVICE });
}
