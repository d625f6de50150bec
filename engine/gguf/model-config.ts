/**
 * Reads a ModelConfig from a GGUF's metadata and tensor names: the one place that knows which
 * GGUF keys mean what for each trainable architecture (llama.cpp's `llama-model.cpp` and
 * `llama-arch.cpp` are the reference). Works on the header alone, so a multi-gigabyte model is
 * described without reading its weights.
 */
import { isTrainableArchitecture, TRAINABLE_ARCHITECTURES, type Architecture, type ModelConfig } from '../model/config.js';
import { GgufValueType, type GgufValue } from './format.js';

export class UnsupportedArchitectureError extends Error {
  readonly code = 'unsupported_architecture';
  constructor(readonly architecture: string) {
    super(`"${architecture}" models can be served but not fine-tuned; svc trains ${TRAINABLE_ARCHITECTURES.join(', ')} models`);
  }
}

type Metadata = ReadonlyMap<string, GgufValue>;

/** A number, or the largest of a per-layer array (Gemma 4 gives head counts and widths per layer). */
function numberAt(metadata: Metadata, key: string): number | undefined {
  const v = metadata.get(key);
  if (v && typeof v.value === 'number') return v.value;
  if (v && Array.isArray(v.value)) {
    const numbers = (v.value as unknown[]).filter((x): x is number => typeof x === 'number');
    return numbers.length ? Math.max(...numbers) : undefined;
  }
  return undefined;
}

function requireNumber(metadata: Metadata, key: string): number {
  const v = numberAt(metadata, key);
  if (v === undefined) throw new Error(`GGUF metadata ${key} is missing or not a number`);
  return v;
}

function stringAt(metadata: Metadata, key: string): string | undefined {
  const v = metadata.get(key);
  return v && typeof v.value === 'string' ? v.value : undefined;
}

/** NEOX-style RoPE families (llama.cpp's LLAMA_ROPE_TYPE_NEOX list, restricted to ours). */
const NEOX_ROPE: ReadonlySet<Architecture> = new Set(['qwen2', 'qwen3', 'gemma3', 'gemma4']);

/**
 * @param tensorNames the GGUF's tensor names: tied output, biases, q/k norms and Llama 3
 *   frequency factors are facts about which tensors exist, exactly as llama.cpp decides them.
 */
export function configFromMetadata(metadata: Metadata, tensorNames: readonly string[]): ModelConfig {
  const arch = stringAt(metadata, 'general.architecture') ?? '(none)';
  if (!isTrainableArchitecture(arch)) throw new UnsupportedArchitectureError(arch);
  const names = new Set(tensorNames);
  const key = (k: string) => `${arch}.${k}`;
  const embeddingLength = requireNumber(metadata, key('embedding_length'));
  const headCount = requireNumber(metadata, key('attention.head_count'));
  const tokens = metadata.get('tokenizer.ggml.tokens');
  const vocabFromTokens = tokens && tokens.type === GgufValueType.ARRAY ? tokens.value.length : undefined;
  const scalingType = stringAt(metadata, key('rope.scaling.type'));
  const scalingFactor = numberAt(metadata, key('rope.scaling.factor'));
  return {
    name: stringAt(metadata, 'general.name') ?? arch,
    architecture: arch,
    vocabSize: vocabFromTokens ?? requireNumber(metadata, key('vocab_size')),
    contextLength: requireNumber(metadata, key('context_length')),
    embeddingLength,
    blockCount: requireNumber(metadata, key('block_count')),
    headCount,
    headCountKv: numberAt(metadata, key('attention.head_count_kv')) ?? headCount,
    headDim: numberAt(metadata, key('attention.key_length')) ?? embeddingLength / headCount,
    feedForwardLength: requireNumber(metadata, key('feed_forward_length')),
    rmsNormEpsilon: requireNumber(metadata, key('attention.layer_norm_rms_epsilon')),
    ropeFreqBase: numberAt(metadata, key('rope.freq_base')) ?? 10000,
    ropeStyle: NEOX_ROPE.has(arch) ? 'neox' : 'normal',
    ropeFreqScale: scalingType === 'linear' && scalingFactor ? 1 / scalingFactor : 1,
    ropeFreqFactors: names.has('rope_freqs.weight'),
    attentionBias: names.has('blk.0.attn_q.bias'),
    qkNorm: names.has('blk.0.attn_q_norm.weight'),
    tiedOutput: !names.has('output.weight'),
  };
}
