/**
 * The shape of a decoder-only transformer of the llama family, as one configuration: the
 * differences between the families svc trains are fields here, read from GGUF metadata, not
 * copies of the forward pass (litgpt's Config habit). Field names mirror GGUF's `<arch>.*` keys.
 *
 *   llama  (Llama 2/3.x, SmolLM2, Mistral, TinyLlama, svc-tiny): RoPE on adjacent pairs ("normal",
 *          the GGUF's q/k rows are permuted for it), GQA, tied or untied output, optional Llama 3
 *          frequency factors (the `rope_freqs.weight` tensor).
 *   qwen2  (Qwen2, Qwen2.5): NEOX RoPE (first half / second half of each head), q/k/v biases.
 *   qwen3  (Qwen3): NEOX RoPE, RMSNorm on each head of q and k, head width from key_length.
 */
import { VOCAB_SIZE } from '../tokenizer.js';

/** The llama family: every field below describes them fully, and both backends train them. */
export const LLAMA_FAMILY = ['llama', 'qwen2', 'qwen3'] as const;
export type LlamaFamilyArchitecture = (typeof LLAMA_FAMILY)[number];
/**
 * Architectures only the torch backend trains: transformers implements them (per-layer head
 * widths, shared KV, softcapping...), so svc describes them by the fields below only roughly
 * (sizes for estimates) and takes each LoRA matrix's shape from the loaded model.
 */
export const TORCH_ONLY_ARCHITECTURES = ['gemma3', 'gemma4'] as const;
export const TRAINABLE_ARCHITECTURES = [...LLAMA_FAMILY, ...TORCH_ONLY_ARCHITECTURES] as const;
export type Architecture = (typeof TRAINABLE_ARCHITECTURES)[number];

export function isTrainableArchitecture(arch: string | undefined): arch is Architecture {
  return (TRAINABLE_ARCHITECTURES as readonly string[]).includes(arch ?? '');
}

export function isLlamaFamily(arch: string | undefined): arch is LlamaFamilyArchitecture {
  return (LLAMA_FAMILY as readonly string[]).includes(arch ?? '');
}

export interface ModelConfig {
  /** general.name, e.g. "svc-tiny" or "Qwen3 0.6B". */
  name: string;
  /** general.architecture. */
  architecture: Architecture;
  vocabSize: number;
  /** Longest sequence the model was trained on (<arch>.context_length). */
  contextLength: number;
  /** Residual width d (<arch>.embedding_length). */
  embeddingLength: number;
  /** Transformer blocks (<arch>.block_count). */
  blockCount: number;
  /** Query heads (<arch>.attention.head_count). */
  headCount: number;
  /** Key/value heads (<arch>.attention.head_count_kv); below headCount for grouped-query attention. */
  headCountKv: number;
  /** Width of one head of q, k and v (<arch>.attention.key_length, else embeddingLength / headCount). */
  headDim: number;
  /** Hidden width of the SwiGLU MLP (<arch>.feed_forward_length). */
  feedForwardLength: number;
  rmsNormEpsilon: number;
  ropeFreqBase: number;
  /** 'normal' rotates adjacent pairs (llama); 'neox' rotates element i with i + headDim/2 (qwen). */
  ropeStyle: 'normal' | 'neox';
  /** Linear RoPE scaling: positions are multiplied by this (1 / rope.scaling.factor; 1 when absent). */
  ropeFreqScale: number;
  /** True when the GGUF has `rope_freqs.weight` (Llama 3.1+ scaling): theta_i is divided by it. */
  ropeFreqFactors: boolean;
  /** q, k and v projections carry a bias (`blk.N.attn_{q,k,v}.bias`; qwen2). */
  attentionBias: boolean;
  /** RMSNorm over each head of q and k before RoPE (`blk.N.attn_{q,k}_norm.weight`; qwen3). */
  qkNorm: boolean;
  /** No `output.weight`: the output projection reuses `token_embd.weight`. */
  tiedOutput: boolean;
  /** Elements in every tensor of the file, when the config was read from one (estimates for architectures outside the llama family). */
  parameterCount?: number;
}

/** The fields every llama-family config shares unless its GGUF says otherwise. */
const PLAIN_LLAMA = {
  architecture: 'llama',
  ropeStyle: 'normal',
  ropeFreqScale: 1,
  ropeFreqFactors: false,
  attentionBias: false,
  qkNorm: false,
  tiedOutput: false,
} as const;

/**
 * svc-tiny: sized so that pretraining on one wasm core finishes in about a quarter of an hour
 * and a LoRA fine-tune of the quickstart in well under two minutes. A context of 160 bytes
 * holds a short system + user + assistant exchange.
 */
export const SVC_TINY: ModelConfig = {
  ...PLAIN_LLAMA,
  name: 'svc-tiny',
  vocabSize: VOCAB_SIZE,
  contextLength: 160,
  embeddingLength: 128,
  blockCount: 2,
  headCount: 4,
  headCountKv: 4,
  headDim: 32,
  feedForwardLength: 352,
  rmsNormEpsilon: 1e-5,
  ropeFreqBase: 10000,
};

/** A toy shape for tests: fast enough for finite-difference gradient checks. */
export const TEST_TINY: ModelConfig = {
  ...PLAIN_LLAMA,
  name: 'svc-test',
  vocabSize: VOCAB_SIZE,
  contextLength: 32,
  embeddingLength: 16,
  blockCount: 2,
  headCount: 2,
  headCountKv: 2,
  headDim: 8,
  feedForwardLength: 24,
  rmsNormEpsilon: 1e-5,
  ropeFreqBase: 10000,
};

/** Builds a plain llama config from the sizes alone (scripts, benches, tests). */
export function llamaConfig(
  sizes: Pick<ModelConfig, 'name' | 'vocabSize' | 'contextLength' | 'embeddingLength' | 'blockCount' | 'headCount' | 'feedForwardLength'> &
    Partial<ModelConfig>,
): ModelConfig {
  return {
    ...PLAIN_LLAMA,
    headCountKv: sizes.headCount,
    headDim: sizes.embeddingLength / sizes.headCount,
    rmsNormEpsilon: 1e-5,
    ropeFreqBase: 10000,
    ...sizes,
  };
}

/** Width of one attention head; checks the shape makes sense for RoPE and GQA. */
export function headDim(config: ModelConfig): number {
  const dim = config.headDim;
  if (!Number.isInteger(dim) || dim < 2 || dim % 2 !== 0) throw new Error(`head dimension must be even for RoPE, got ${dim}`);
  if (config.headCount % config.headCountKv !== 0)
    throw new Error(`head_count (${config.headCount}) must be a multiple of head_count_kv (${config.headCountKv})`);
  return dim;
}
