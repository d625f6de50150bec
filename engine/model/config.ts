/**
 * Shape of a llama-architecture model (RMSNorm, RoPE on adjacent pairs, SwiGLU), and the shipped
 * `svc-tiny` size. The fields mirror the GGUF `llama.*` metadata one to one so export and import
 * are mechanical.
 */
import { VOCAB_SIZE } from '../tokenizer.js';

export interface ModelConfig {
  /** Family name written to general.name, e.g. "svc-tiny". */
  name: string;
  vocabSize: number;
  /** Longest sequence the model was trained on (llama.context_length). */
  contextLength: number;
  /** Residual width d (llama.embedding_length). */
  embeddingLength: number;
  /** Transformer blocks (llama.block_count). */
  blockCount: number;
  /** Attention heads; headDim = embeddingLength / headCount. */
  headCount: number;
  /** Hidden width of the SwiGLU MLP (llama.feed_forward_length). */
  feedForwardLength: number;
  rmsNormEpsilon: number;
  ropeFreqBase: number;
}

/**
 * svc-tiny: sized so that pretraining on one wasm core finishes in about a quarter of an hour
 * and a LoRA fine-tune of the quickstart in well under two minutes. A context of 160 bytes
 * holds a short system + user + assistant exchange.
 */
export const SVC_TINY: ModelConfig = {
  name: 'svc-tiny',
  vocabSize: VOCAB_SIZE,
  contextLength: 160,
  embeddingLength: 128,
  blockCount: 2,
  headCount: 4,
  feedForwardLength: 352,
  rmsNormEpsilon: 1e-5,
  ropeFreqBase: 10000,
};

/** A toy shape for tests: fast enough for finite-difference gradient checks. */
export const TEST_TINY: ModelConfig = {
  name: 'svc-test',
  vocabSize: VOCAB_SIZE,
  contextLength: 32,
  embeddingLength: 16,
  blockCount: 2,
  headCount: 2,
  feedForwardLength: 24,
  rmsNormEpsilon: 1e-5,
  ropeFreqBase: 10000,
};

export function headDim(config: ModelConfig): number {
  if (config.embeddingLength % config.headCount !== 0) throw new Error('embeddingLength must be a multiple of headCount');
  const dim = config.embeddingLength / config.headCount;
  if (dim % 2 !== 0) throw new Error('head dimension must be even for RoPE');
  return dim;
}
