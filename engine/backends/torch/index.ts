/**
 * The torch compute backend: a Python process (python/svc_torch) that holds the frozen base model
 * and the LoRA tensors on every CPU core or a GPU, spoken to over framed stdin/stdout (PROTOCOL.md).
 * Used for models too large or too slow for tfjs-wasm's single thread and 4 GiB heap.
 */
import path from 'node:path';
import type { ModelConfig } from '../../model/config.js';
import type {
  BackendInfo,
  BaseSource,
  ComputeBackend,
  EvalResult,
  LoadProgress,
  LoraSpec,
  LoraTensors,
  OptimizerSettings,
  StepResult,
  TokenBatch,
} from '../types.js';
import { detectTorch } from './detect.js';
import type { Frame, WireTensor } from './framing.js';
import { TorchProcess } from './process.js';
import type { TorchRanks } from './ranks.js';

export { detectTorch, forgetTorchDetections, isTorchDetectionRemembered, pythonCandidates, type TorchDetection } from './detect.js';
export type { TorchRanks } from './ranks.js';

export const TORCH_DTYPES = ['auto', 'float32', 'bfloat16', 'float16'] as const;
export type TorchDtype = (typeof TORCH_DTYPES)[number];

export interface TorchBackendOptions {
  /**
   * The Python to run. Default: SVC_PYTHON when set (used as given, so a wrong setting is an error
   * naming it rather than silently replaced), else the first of python3 on PATH and
   * /usr/bin/python3 that imports torch.
   */
  python?: string;
  /** 'cuda', 'cuda:1', 'mps', 'cpu'; default cuda > mps > cpu (or SVC_TORCH_DEVICE). */
  device?: string;
  /**
   * Compute dtype of the frozen base model (the LoRA stays float32). 'auto' (default, or
   * SVC_TORCH_DTYPE): bfloat16 on CUDA (float16 without bf16) and on CPUs that compute bfloat16
   * in hardware (AVX512-BF16, AMX, Arm BF16), float32 elsewhere.
   */
  dtype?: TorchDtype;
  /** CPU threads; default every core (or SVC_TORCH_THREADS). */
  threads?: number;
  /**
   * Recompute each block's activations in the backward pass instead of keeping them: less memory,
   * about a third more compute. 'auto' (default) turns it on when a batch would keep over ~2 GiB.
   */
  checkpointActivations?: boolean | 'auto';
  /**
   * A quantised GGUF base: 'keep' (default) holds its Q8_0, Q4_K and Q6_K projections as the file's
   * blocks, dequantised per layer in the forward and backward pass (svc_torch/quantized.py);
   * 'dequantize' expands every weight to the compute dtype at load.
   */
  quantizedBase?: 'keep' | 'dequantize';
  /** Logits above this many bytes are computed a slice of tokens at a time (default 256 MiB). */
  logitsChunkBytes?: number;
  /** Receives the process's stderr, line by line. */
  log?: (line: string) => void;
  /** Train as several data-parallel ranks under torchrun (DDP): CPU processes, GPUs or machines. */
  ranks?: TorchRanks;
}

function batchTensors(batch: TokenBatch): WireTensor[] {
  const shape = [batch.batchSize, batch.length];
  return [
    { name: 'inputs', dtype: 'i32', shape, data: batch.inputs },
    { name: 'targets', dtype: 'i32', shape, data: batch.targets },
    { name: 'mask', dtype: 'f32', shape, data: batch.mask },
  ];
}

function loraFromFrame(frame: Frame): LoraTensors {
  const out: LoraTensors = {};
  for (const [name, t] of frame.tensors) out[name] = { shape: [t.shape[0], t.shape[1]], data: t.data as Float32Array };
  return out;
}

export class TorchBackend implements ComputeBackend {
  info: BackendInfo = { name: 'torch', device: 'unknown', dtype: 'unknown' };
  /** What the process said at hello: python, torch and numpy versions, threads, pid. */
  hello: Record<string, unknown> = {};
  projectionShapes?: Record<string, [number, number]>;
  /** Elements of the loaded base model (the bench's bytes per parameter). */
  parameters = 0;
  /** Bytes the loaded base's weights and buffers take in memory (quantised blocks as stored). */
  baseBytes = 0;
  /** How many projections of the loaded base stay quantised in memory, and their GGUF types (Q4_K...). */
  quantizedProjections = 0;
  quantizedTypes: string[] = [];
  /** On the CPU with kept-quantised weights, what dequantises them ("native dequantiser built by cc"). */
  dequantizer: string | undefined;
  weightsNotice: string | undefined;
  /** The embedding tables and output head kept quantised, by GGUF name (token_embd.weight, output.weight). */
  quantizedTables: string[] = [];
  /** After loadBase: what the weights were read from (the Hugging Face safetensors, or the GGUF). */
  baseSource?: string;
  /** After initLora: bytes of the model's parameters rank 0 holds (under FSDP, its shard of the layers). */
  rankParameterBytes = 0;
  /** After initLora: by rank, how far each process's resident memory peaked above where it stood when the load began. */
  rankLoadRssBytes: number[] = [];
  private disposed?: Promise<void>;

  constructor(
    private readonly process: TorchProcess,
    private readonly loadOptions: Pick<TorchBackendOptions, 'checkpointActivations' | 'logitsChunkBytes' | 'dtype' | 'quantizedBase'> = {},
  ) {}

  /** The Python process id (tests, the bench's RSS reading). */
  get pid(): number | undefined {
    return this.process.pid;
  }

  async start(): Promise<void> {
    const frame = await this.process.request('hello');
    this.process.markStarted();
    this.hello = frame.header;
    const strategy = frame.header.strategy === 'fsdp' || frame.header.strategy === 'ddp' ? frame.header.strategy : undefined;
    this.info = {
      name: 'torch',
      device: String(frame.header.device),
      dtype: String(frame.header.dtype),
      worldSize: Number(frame.header.worldSize ?? 1),
      ...(strategy ? { strategy } : {}),
    };
  }

  async loadBase(modelPath: string, config: ModelConfig, onProgress?: (progress: LoadProgress) => void, source: BaseSource = {}): Promise<void> {
    // Absolute: ranks under torchrun run in another working directory.
    const frame = await this.process.request(
      'load',
      {
        modelPath: path.resolve(modelPath),
        hfFolder: source.hfFolder ? path.resolve(source.hfFolder) : undefined,
        config,
        checkpointActivations: this.loadOptions.checkpointActivations ?? 'auto',
        logitsChunkBytes: this.loadOptions.logitsChunkBytes,
        dtype: this.loadOptions.dtype,
        quantizedBase: this.loadOptions.quantizedBase,
      },
      [],
      (p) => onProgress?.(p as unknown as LoadProgress),
    );
    this.info = { ...this.info, device: String(frame.header.device), dtype: String(frame.header.dtype) };
    this.projectionShapes = frame.header.projectionShapes as Record<string, [number, number]>;
    this.parameters = Number(frame.header.parameters);
    this.baseBytes = Number(frame.header.baseBytes ?? 0);
    this.quantizedProjections = Number(frame.header.quantizedProjections ?? 0);
    this.quantizedTypes = (frame.header.quantizedTypes as string[] | undefined) ?? [];
    this.quantizedTables = (frame.header.quantizedTables as string[] | undefined) ?? [];
    this.dequantizer = (frame.header.dequantizer as string | null | undefined) ?? undefined;
    this.weightsNotice =
      this.quantizedTypes.length > 0
        ? `${this.quantizedTypes.join(', ')} weights kept quantised in memory, dequantised per layer${this.dequantizer ? ` by the ${this.dequantizer}` : ''}`
        : undefined;
    this.baseSource =
      frame.header.source === 'safetensors' && source.hfFolder
        ? `the Hugging Face safetensors in ${path.resolve(source.hfFolder)}`
        : `the GGUF ${path.resolve(modelPath)}`;
  }

  async initLora(spec: LoraSpec, initial: LoraTensors): Promise<void> {
    const tensors: WireTensor[] = Object.entries(initial).map(([name, m]) => ({ name, dtype: 'f32', shape: [...m.shape], data: m.data }));
    const frame = await this.process.request('init_lora', { spec }, tensors);
    this.rankParameterBytes = Number(frame.header.rankParameterBytes ?? 0);
    this.rankLoadRssBytes = ((frame.header.rankLoadRssBytes as number[] | undefined) ?? []).map(Number);
  }

  async trainStep(batch: TokenBatch, optimizer: OptimizerSettings): Promise<StepResult> {
    const frame = await this.process.request('train_step', { batchSize: batch.batchSize, length: batch.length, optimizer }, batchTensors(batch));
    const gradNorm = frame.header.gradNorm;
    const correct = Number(frame.header.correctTokens);
    return {
      loss: Number(frame.header.loss),
      gradNorm: typeof gradNorm === 'number' ? gradNorm : NaN,
      tokenAccuracy: batch.maskedTokens ? correct / batch.maskedTokens : NaN,
    };
  }

  async evalBatch(batch: TokenBatch): Promise<EvalResult> {
    const frame = await this.process.request('eval', { batchSize: batch.batchSize, length: batch.length }, batchTensors(batch));
    return { lossSum: Number(frame.header.lossSum), maskedTokens: Number(frame.header.maskedTokens), correctTokens: Number(frame.header.correctTokens) };
  }

  /** Loss and LoRA gradients of a batch without an update (tests compare them with tfjs). */
  async gradients(batch: TokenBatch): Promise<{ loss: number; grads: LoraTensors }> {
    const frame = await this.process.request('grads', { batchSize: batch.batchSize, length: batch.length }, batchTensors(batch));
    return { loss: Number(frame.header.loss), grads: loraFromFrame(frame) };
  }

  /** Next-token logits after `ids` (one sequence, current LoRA applied): tests and greedy checks. */
  async logits(ids: readonly number[]): Promise<Float32Array> {
    const frame = await this.process.request('logits', {}, [{ name: 'inputs', dtype: 'i32', shape: [1, ids.length], data: Int32Array.from(ids) }]);
    return frame.tensors.get('logits')!.data as Float32Array;
  }

  async loraTensors(): Promise<LoraTensors> {
    return loraFromFrame(await this.process.request('get_lora'));
  }

  /** Peak resident memory of the Python process and peak accelerator memory, in bytes; whether the last step recomputed activations. */
  async memory(): Promise<{ peakRssBytes: number; peakDeviceBytes: number; checkpointing: boolean }> {
    const frame = await this.process.request('memory');
    return {
      peakRssBytes: Number(frame.header.peakRssBytes),
      peakDeviceBytes: Number(frame.header.peakDeviceBytes),
      checkpointing: frame.header.checkpointing === true,
    };
  }

  /** Asks the process to finish; kills it if it has not within a few seconds. Safe to call twice. */
  dispose(): Promise<void> {
    this.disposed ??= (async () => {
      this.process.request('shutdown').catch(() => {});
      this.process.closeInput();
      const timer = setTimeout(() => this.process.kill(), 5000);
      await this.process.exited;
      clearTimeout(timer);
    })();
    return this.disposed;
  }
}

/** Starts the Python process and waits for its hello; rejects with a readable reason otherwise. */
export async function startTorchBackend(options: TorchBackendOptions = {}): Promise<TorchBackend> {
  let python = options.python || process.env.SVC_PYTHON;
  if (!python) {
    const found = await detectTorch();
    if (!found.ok) throw new Error(found.reason);
    python = found.python;
  }
  const child = new TorchProcess({ python, device: options.device, threads: options.threads, log: options.log, ranks: options.ranks });
  const backend = new TorchBackend(child, {
    checkpointActivations: options.checkpointActivations,
    logitsChunkBytes: options.logitsChunkBytes,
    dtype: options.dtype,
    quantizedBase: options.quantizedBase,
  });
  try {
    await backend.start();
  } catch (error) {
    await backend.dispose();
    throw error;
  }
  return backend;
}
