/**
 * The seam between the trainer loop (data order, schedule, eval, checkpoints, events, cancel,
 * adapter export: all in TypeScript, in engine/train/) and the code that does tensor work.
 *
 * A backend holds the frozen base model and the LoRA tensors with their optimiser state. It is
 * given token ids and masks, never text, and hands back numbers: a loss, a gradient norm, the
 * LoRA matrices. Two implement it: `tfjs` (in process, wasm, the zero-install default) and
 * `torch` (a Python process on every CPU core or a GPU; engine/backends/torch/).
 *
 * LoRA tensors cross the seam in PEFT's layout, which is also the row order of llama.cpp's GGUF
 * adapters: A is [r, in] (`lora_A.weight`), B is [out, r] (`lora_B.weight`), row-major float32,
 * keyed by GGUF names (`blk.0.attn_q.weight.lora_a`). A backend keeps whatever layout it likes
 * inside.
 */
import type { ModelConfig } from '../model/config.js';

export type BackendName = 'tfjs' | 'torch';

/** One padded batch: inputs/targets are [batchSize, length] token ids, mask 1 where loss counts. */
export interface TokenBatch {
  batchSize: number;
  length: number;
  inputs: Int32Array;
  targets: Int32Array;
  mask: Float32Array;
  /** Tokens that carry loss (sum of mask). */
  maskedTokens: number;
  /** Non-padding input tokens (for tokens/s). */
  tokens: number;
}

/** A matrix in row-major float32. */
export interface Matrix {
  shape: [rows: number, cols: number];
  data: Float32Array;
}

/** LoRA matrices by GGUF tensor name: `<weight>.lora_a` [r, in] and `<weight>.lora_b` [out, r]. */
export type LoraTensors = Record<string, Matrix>;

export interface LoraSpec {
  r: number;
  alpha: number;
  /** GGUF short names of the adapted projections: attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down. */
  targets: string[];
}

/** AdamW with global-norm clipping, decoupled weight decay on matrices only (engine/train/adamw.ts). */
export interface OptimizerSettings {
  learningRate: number;
  beta1: number;
  beta2: number;
  epsilon: number;
  weightDecay: number;
  /** Clip the global gradient norm to this; 0 disables. The scale is maxGradNorm / (norm + 1e-6). */
  maxGradNorm: number;
}

export interface LoadProgress {
  /** Bytes of tensor data read so far, and in all. */
  loadedBytes: number;
  totalBytes: number;
  tensor: string;
}

export interface BackendInfo {
  name: BackendName;
  /** Where the tensors live, in words: "wasm", "cpu (16 threads)", "cuda:0 (NVIDIA H100 80GB HBM3)". */
  device: string;
  /** Compute precision of the base model's forward pass, e.g. "float32", "bfloat16". */
  dtype: string;
  /** Data-parallel ranks training together (torch under torchrun); absent or 1: one process. Each step takes batchSize examples per rank. */
  worldSize?: number;
  /** How the ranks hold the base: each whole (ddp) or its layers sharded across them (fsdp); absent for one process. */
  strategy?: 'ddp' | 'fsdp';
}

/** One optimiser step's numbers. */
export interface StepResult {
  /** Mean masked cross-entropy. */
  loss: number;
  gradNorm: number;
  /** Share of masked tokens whose most likely next token is the target (NaN when none is masked). */
  tokenAccuracy: number;
}

/** One evaluation batch's sums, so the loop can weight batches by tokens. */
export interface EvalResult {
  lossSum: number;
  maskedTokens: number;
  /** Masked tokens whose most likely next token is the target. */
  correctTokens: number;
}

/** Where a base model's weights may come from besides its GGUF. */
export interface BaseSource {
  /**
   * The Hugging Face folder the GGUF was converted from: a backend that runs transformers (torch)
   * reads its safetensors instead of the GGUF; the GGUF still names the tensors. Others ignore it.
   */
  hfFolder?: string;
}

export interface ComputeBackend {
  readonly info: BackendInfo;
  /** Reads the base model's weights from its GGUF (dequantised, frozen). Call once. */
  loadBase(modelPath: string, config: ModelConfig, onProgress?: (progress: LoadProgress) => void, source?: BaseSource): Promise<void>;
  /** After loadBase, what the weights were read from, as a job's log says it (absent: the GGUF). */
  readonly baseSource?: string;
  /** After loadBase, how the weights are held where a job's log should say it (kept quantised). */
  readonly weightsNotice?: string;
  /** After loadBase, where the backend knows them from the model itself: each projection's [out, in] (keyed `blk.N.<proj>`). */
  readonly projectionShapes?: Readonly<Record<string, readonly [number, number]>>;
  /** Installs the LoRA matrices to train (their initial values come from the loop, so a seed means the same start on every backend). */
  initLora(spec: LoraSpec, initial: LoraTensors): Promise<void>;
  /** Forward, backward and one AdamW update of the LoRA matrices. Loss is the mean over masked tokens. */
  trainStep(batch: TokenBatch, optimizer: OptimizerSettings): Promise<StepResult>;
  /** Summed (not averaged) masked cross-entropy and correct tokens, so the loop can weight batches by tokens. */
  evalBatch(batch: TokenBatch): Promise<EvalResult>;
  /** The current LoRA matrices in the seam's layout. */
  loraTensors(): Promise<LoraTensors>;
  /** Frees tensors; for torch, ends the Python process. Safe to call twice. */
  dispose(): Promise<void>;
}
