/**
 * Forward pass and loss of the llama family in tfjs, written to match llama.cpp's per-architecture
 * graphs (src/models/llama.cpp, qwen2.cpp, qwen3.cpp) so greedy decoding agrees token for token:
 *   x = embed(ids); per block: x += Wo·attn(rope(norm_q(Wq·n + bq)), rope(norm_k(Wk·n + bk)), Wv·n + bv)
 *   with n = rmsnorm(x); x += Wdown·(silu(Wgate·n) ⊙ Wup·n) with n = rmsnorm(x);
 *   logits = Wout·rmsnorm(x) (Wout = embedding when tied).
 * The optional pieces (biases, q/k norms, GQA, RoPE style, frequency factors) are config fields.
 * Two wasm-backend constraints shape the code: gather has no gradient there, so a trainable
 * embedding is one-hot × matmul (a frozen one, as under LoRA, a copy of rows); and everything
 * position-dependent (RoPE tables, causal mask) is a cached constant so a step builds no tables.
 */
import { tf } from '../backend.js';
import type { LoraAdapter } from '../lora.js';
import { headDim, type ModelConfig } from './config.js';
import { ropeCausalAttention, type RopeTables } from './attention.js';
import { rmsNorm, swiglu } from './elementwise.js';
import { maskedCrossEntropy, type TokenCounts } from './loss.js';
import { frozenTranspose, loraDelta, matMul2d, matMul2dFrozen } from './matmul.js';
import { peek } from './tensor-data.js';
import { BoundedCache } from './boundedCache.js';
import type { BlockLinear, ModelWeights } from './weights.js';

export interface PositionTables {
  rope: RopeTables;
  causalMask: tf.Tensor2D; // [T, T]: 0 on/below the diagonal, -1e9 above
}

/**
 * Tables by head size, RoPE settings and sequence length. Bounded: batch lengths vary from job to
 * job in a long-lived worker, and each entry keeps a [T, T] mask tensor. An evicted entry belongs to
 * no step in flight (the current step's length is the most recently used), so its mask is freed.
 */
export const POSITION_TABLE_CACHE_ENTRIES = 8;
const tableCache = new BoundedCache<string, PositionTables>(POSITION_TABLE_CACHE_ENTRIES, (tables) => tables.causalMask.dispose());

/** How many position tables are cached now (for tests of the bound). */
export function cachedPositionTableCount(): number {
  return tableCache.size;
}

/**
 * RoPE as llama.cpp's ggml_rope_ext computes it: pair i is rotated by
 * pos · freqScale · base^(-2i/headDim) / factor_i. 'normal' pairs are adjacent elements (2i, 2i+1);
 * 'neox' pairs are (i, i + headDim/2). The tables are plain arrays: the attention op applies them
 * while it cuts out the heads (attention.ts).
 */
export function positionTables(config: ModelConfig, length: number, factors?: Float32Array): PositionTables {
  const dim = headDim(config);
  const key = `${dim}:${config.ropeStyle}:${config.ropeFreqBase}:${config.ropeFreqScale}:${factors ? Array.from(factors).join(',') : ''}:${length}`;
  const cached = tableCache.get(key);
  if (cached) return cached;
  const half = dim / 2;
  const first = Int32Array.from({ length: half }, (_, i) => (config.ropeStyle === 'neox' ? i : 2 * i));
  const second = Int32Array.from({ length: half }, (_, i) => (config.ropeStyle === 'neox' ? i + half : 2 * i + 1));
  const cos = new Float32Array(length * half);
  const sin = new Float32Array(length * half);
  for (let pos = 0; pos < length; pos++) {
    for (let i = 0; i < half; i++) {
      const theta = (pos * config.ropeFreqScale * Math.pow(config.ropeFreqBase, (-2 * i) / dim)) / (factors ? factors[i] : 1);
      cos[pos * half + i] = Math.cos(theta);
      sin[pos * half + i] = Math.sin(theta);
    }
  }
  const mask = new Float32Array(length * length);
  for (let q = 0; q < length; q++) for (let k = q + 1; k < length; k++) mask[q * length + k] = -1e9;
  const tables: PositionTables = { rope: { cos, sin, first, second }, causalMask: tf.keep(tf.tensor2d(mask, [length, length])) };
  tableCache.set(key, tables);
  return tables;
}

/** The Llama 3 frequency factors are constants of the model: read once per tensor. */
const factorCache = new WeakMap<tf.Tensor, Float32Array>();
function ropeFactors(weights: ModelWeights): Float32Array | undefined {
  const tensor = weights['rope_freqs.weight'];
  if (!tensor) return undefined;
  let values = factorCache.get(tensor);
  if (!values) factorCache.set(tensor, (values = tensor.dataSync() as Float32Array));
  return values;
}

/** x · W (+ bias), plus the LoRA update (x · A) · B · scaling when the adapter targets this projection. */
function linear(x: tf.Tensor2D, weights: ModelWeights, block: number, name: BlockLinear, lora?: LoraAdapter): tf.Tensor2D {
  const base = `blk.${block}.${name}.weight`;
  // With an adapter the base weights are frozen: skip their (discarded) gradients.
  let y = lora ? matMul2dFrozen(x, weights[base]) : matMul2d(x, weights[base]);
  const bias = weights[`blk.${block}.${name}.bias`];
  if (bias) y = y.add(bias) as tf.Tensor2D;
  const a = lora?.weights[`${base}.lora_a`] as tf.Tensor2D | undefined;
  const b = lora?.weights[`${base}.lora_b`] as tf.Tensor2D | undefined;
  if (lora && a && b) y = y.add(loraDelta(x, a, b, lora.scaling)) as tf.Tensor2D;
  return y;
}

/** RMSNorm over each head's hd columns of [B·T, heads·hd] (qwen3's q/k norms). */
function headNorm(x: tf.Tensor2D, weight: tf.Tensor, config: ModelConfig, frozen: boolean): tf.Tensor2D {
  return rmsNorm(x.reshape([-1, headDim(config)]), weight, config.rmsNormEpsilon, frozen).reshape(x.shape) as tf.Tensor2D;
}

function attention(x: tf.Tensor2D, weights: ModelWeights, block: number, batch: number, length: number, config: ModelConfig, lora?: LoraAdapter): tf.Tensor2D {
  const tables = positionTables(config, length, ropeFactors(weights));
  const qNorm = weights[`blk.${block}.attn_q_norm.weight`];
  const kNorm = weights[`blk.${block}.attn_k_norm.weight`];
  let q = linear(x, weights, block, 'attn_q', lora);
  let k = linear(x, weights, block, 'attn_k', lora);
  const v = linear(x, weights, block, 'attn_v', lora);
  if (qNorm) q = headNorm(q, qNorm, config, !!lora);
  if (kNorm) k = headNorm(k, kNorm, config, !!lora);
  const shape = { batch, length, heads: config.headCount, kvHeads: config.headCountKv, headDim: headDim(config) };
  const context = ropeCausalAttention(q, k, v, shape, tables.rope, tables.causalMask, 1 / Math.sqrt(shape.headDim)); // [B·T, H·hd]
  return linear(context, weights, block, 'attn_output', lora);
}

function feedForward(x: tf.Tensor2D, weights: ModelWeights, block: number, lora?: LoraAdapter): tf.Tensor2D {
  const gate = linear(x, weights, block, 'ffn_gate', lora);
  const up = linear(x, weights, block, 'ffn_up', lora);
  return linear(swiglu(gate, up), weights, block, 'ffn_down', lora);
}

/**
 * Rows of a frozen embedding, copied in JavaScript: tfjs-wasm's Gather kernel is much slower than
 * a plain copy. (No gradient: the table is frozen.)
 */
function frozenRows(table: tf.Tensor, ids: Int32Array): tf.Tensor2D {
  const width = table.shape[1]!;
  const out = new Float32Array(ids.length * width);
  const values = peek(table);
  const rows = table.shape[0]!;
  for (let i = 0; i < ids.length; i++) {
    if (!(ids[i] >= 0 && ids[i] < rows)) throw new Error(`token id ${ids[i]} is outside the vocabulary of ${rows}`);
    out.set(values.subarray(ids[i] * width, (ids[i] + 1) * width), i * width);
  }
  return tf.tensor2d(out, [ids.length, width]);
}

/**
 * Logits for every position: ids [B, T] int32 -> [B·T, vocab]. Call inside tf.tidy or a
 * gradient function; intermediate tensors are not disposed here.
 */
export function forwardLogits(config: ModelConfig, weights: ModelWeights, ids: tf.Tensor2D, lora?: LoraAdapter): tf.Tensor2D {
  return outputHead(config, weights, finalStates(config, weights, ids, lora), lora);
}

/**
 * The logits at each sequence's last position only, [B, vocab]: what decoding reads. The output
 * head, the largest product of a small model with a real vocabulary, then multiplies one row per
 * sequence instead of every position's.
 */
export function forwardLastLogits(config: ModelConfig, weights: ModelWeights, ids: tf.Tensor2D, lora?: LoraAdapter): tf.Tensor2D {
  const [batch, length] = ids.shape;
  const states = finalStates(config, weights, ids, lora, true);
  const last = states
    .reshape([batch, length, -1])
    .slice([0, length - 1, 0], [batch, 1, -1])
    .reshape([batch, -1]) as tf.Tensor2D;
  return outputHead(config, weights, last, lora);
}

/**
 * The decoder's output after the final norm, one row per position: [B*T, d]. `lookup`: read the
 * embedding's rows (decoding, and LoRA, which never train the table) instead of the one-hot product
 * a trained table needs for its gradient.
 */
function finalStates(config: ModelConfig, weights: ModelWeights, ids: tf.Tensor2D, lora?: LoraAdapter, lookup = !!lora): tf.Tensor2D {
  const [batch, length] = ids.shape;
  if (length > config.contextLength) throw new Error(`sequence of ${length} tokens exceeds the context of ${config.contextLength}`);
  const flatIds = ids.reshape([-1]) as tf.Tensor1D;
  const embedding = weights['token_embd.weight'];
  // Frozen (LoRA, decoding): a gather, no gradient needed. Trainable: one-hot × matmul (wasm has no gather gradient).
  let x = lookup ? frozenRows(embedding, flatIds.dataSync() as Int32Array) : matMul2d(tf.oneHot(flatIds, config.vocabSize), embedding);
  for (let block = 0; block < config.blockCount; block++) {
    const attnIn = rmsNorm(x, weights[`blk.${block}.attn_norm.weight`], config.rmsNormEpsilon, !!lora);
    x = x.add(attention(attnIn, weights, block, batch, length, config, lora)) as tf.Tensor2D;
    const ffnIn = rmsNorm(x, weights[`blk.${block}.ffn_norm.weight`], config.rmsNormEpsilon, !!lora);
    x = x.add(feedForward(ffnIn, weights, block, lora)) as tf.Tensor2D;
  }
  return rmsNorm(x, weights['output_norm.weight'], config.rmsNormEpsilon, !!lora);
}

function outputHead(config: ModelConfig, weights: ModelWeights, final: tf.Tensor2D, lora?: LoraAdapter): tf.Tensor2D {
  const embedding = weights['token_embd.weight'];
  if (config.tiedOutput) {
    if (!lora) return tf.matMul(final, embedding, false, true) as tf.Tensor2D;
    return matMul2dFrozen(final, frozenTranspose(embedding)); // the embedding transposed once and kept: it is frozen
  }
  return (lora ? matMul2dFrozen : matMul2d)(final, weights['output.weight']);
}

/**
 * Mean next-token cross-entropy over positions whose mask is 1.
 * inputs/targets: [B, T] int32 (targets are inputs shifted by one); mask: [B, T] float32.
 * Returns a scalar; if the mask is all zero the loss is 0 rather than NaN. `counts` receives the
 * masked tokens predicted right (argmax equals the target).
 */
export function maskedLoss(
  config: ModelConfig,
  weights: ModelWeights,
  inputs: tf.Tensor2D,
  targets: tf.Tensor2D,
  mask: tf.Tensor2D,
  lora?: LoraAdapter,
  counts?: TokenCounts,
): tf.Scalar {
  const logits = forwardLogits(config, weights, inputs, lora);
  return maskedCrossEntropy(logits, targets.dataSync() as Int32Array, mask.dataSync() as Float32Array, counts);
}
