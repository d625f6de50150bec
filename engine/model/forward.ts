/**
 * Forward pass and loss of the llama family in tfjs, written to match llama.cpp's per-architecture
 * graphs (src/models/llama.cpp, qwen2.cpp, qwen3.cpp) so greedy decoding agrees token for token:
 *   x = embed(ids); per block: x += Wo·attn(rope(norm_q(Wq·n + bq)), rope(norm_k(Wk·n + bk)), Wv·n + bv)
 *   with n = rmsnorm(x); x += Wdown·(silu(Wgate·n) ⊙ Wup·n) with n = rmsnorm(x);
 *   logits = Wout·rmsnorm(x) (Wout = embedding when tied).
 * The optional pieces (biases, q/k norms, GQA, RoPE style, frequency factors) are config fields.
 * Two wasm-backend constraints shape the code: gather has no gradient there, so a trainable
 * embedding is one-hot × matmul (a frozen one, as under LoRA, is a plain gather); and everything
 * position-dependent (RoPE tables, causal mask) is a cached constant so a step builds no tables.
 */
import { tf } from '../backend.js';
import type { LoraAdapter } from '../lora.js';
import { headDim, type ModelConfig } from './config.js';
import { frozenTranspose, matMul2d, matMul2dFrozen } from './matmul.js';
import type { BlockLinear, ModelWeights } from './weights.js';

interface PositionTables {
  cos: tf.Tensor2D; // [T, headDim]: each angle at both members of its rotated pair
  sin: tf.Tensor2D; // [T, headDim]
  rotate: tf.Tensor2D; // [headDim, headDim]: maps each pair (a, b) to (-b, a)
  causalMask: tf.Tensor2D; // [T, T]: 0 on/below the diagonal, -1e9 above
}

const tableCache = new Map<string, PositionTables>();

/**
 * RoPE as llama.cpp's ggml_rope_ext computes it: pair i is rotated by
 * pos · freqScale · base^(-2i/headDim) / factor_i. 'normal' pairs are adjacent elements (2i, 2i+1);
 * 'neox' pairs are (i, i + headDim/2). Rotation = x·cos + rotate(x)·sin, the swap a fixed matmul.
 */
function positionTables(config: ModelConfig, length: number, factors?: Float32Array): PositionTables {
  const dim = headDim(config);
  const key = `${dim}:${config.ropeStyle}:${config.ropeFreqBase}:${config.ropeFreqScale}:${factors ? Array.from(factors).join(',') : ''}:${length}`;
  const cached = tableCache.get(key);
  if (cached) return cached;
  const half = dim / 2;
  // The two members of pair i, in the layout of this RoPE style.
  const pair = (i: number): [number, number] => (config.ropeStyle === 'neox' ? [i, i + half] : [2 * i, 2 * i + 1]);
  const cos = new Float32Array(length * dim);
  const sin = new Float32Array(length * dim);
  for (let pos = 0; pos < length; pos++) {
    for (let i = 0; i < half; i++) {
      const theta = (pos * config.ropeFreqScale * Math.pow(config.ropeFreqBase, (-2 * i) / dim)) / (factors ? factors[i] : 1);
      const [a, b] = pair(i);
      cos[pos * dim + a] = cos[pos * dim + b] = Math.cos(theta);
      sin[pos * dim + a] = sin[pos * dim + b] = Math.sin(theta);
    }
  }
  const rotate = new Float32Array(dim * dim);
  for (let i = 0; i < half; i++) {
    const [a, b] = pair(i);
    rotate[b * dim + a] = -1; // out[a] = -x[b]
    rotate[a * dim + b] = 1; //  out[b] =  x[a]
  }
  const mask = new Float32Array(length * length);
  for (let q = 0; q < length; q++) for (let k = q + 1; k < length; k++) mask[q * length + k] = -1e9;
  const tables: PositionTables = {
    cos: tf.keep(tf.tensor2d(cos, [length, dim])),
    sin: tf.keep(tf.tensor2d(sin, [length, dim])),
    rotate: tf.keep(tf.tensor2d(rotate, [dim, dim])),
    causalMask: tf.keep(tf.tensor2d(mask, [length, length])),
  };
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

function rmsNorm<T extends tf.Tensor>(x: T, weight: tf.Tensor, eps: number): T {
  const meanSquare = x.square().mean(-1, true);
  return x.mul(meanSquare.add(eps).rsqrt()).mul(weight) as T;
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
  if (lora && a && b) y = y.add(matMul2d(matMul2d(x, a), b).mul(lora.scaling)) as tf.Tensor2D;
  return y;
}

/** [B·T, heads·hd] -> [B, heads, T, hd], with the per-head norm and RoPE applied when given. */
function splitHeads(x: tf.Tensor2D, batch: number, length: number, heads: number, config: ModelConfig, norm?: tf.Tensor, tables?: PositionTables): tf.Tensor4D {
  const dim = headDim(config);
  let h = x.reshape([batch, length, heads, dim]).transpose([0, 2, 1, 3]) as tf.Tensor4D;
  if (norm) h = rmsNorm(h, norm, config.rmsNormEpsilon);
  if (tables) {
    const rotated = matMul2dFrozen(h.reshape([-1, dim]), tables.rotate).reshape(h.shape);
    h = h.mul(tables.cos).add(rotated.mul(tables.sin)) as tf.Tensor4D;
  }
  return h;
}

/**
 * Grouped-query attention: query head h reads key/value head floor(h / group), as ggml's
 * broadcasting matmul does. Expanded with a broadcast multiply (tile has no rank-5 gradient).
 */
function expandKv(kv: tf.Tensor4D, config: ModelConfig): tf.Tensor4D {
  const group = config.headCount / config.headCountKv;
  if (group === 1) return kv;
  const [batch, heads, length, dim] = kv.shape;
  const spread = kv.reshape([batch * heads, 1, length * dim]).mul(tf.ones([1, group, 1]));
  return spread.reshape([batch, heads * group, length, dim]) as tf.Tensor4D;
}

/**
 * softmax(q·kᵀ·scale + mask)·v per head, as plain untransposed 2-D products: tfjs-wasm runs those
 * through XNNPACK (~26 GFLOP/s here) but batched and transposed products through a naive loop
 * (~2.3 GFLOP/s), which made attention 44-66% of a step. k is transposed once, explicitly.
 */
function causalAttention(q: tf.Tensor4D, k: tf.Tensor4D, v: tf.Tensor4D, mask: tf.Tensor2D, scale: number): tf.Tensor4D {
  const [batch, heads, length, dim] = q.shape;
  const qs = tf.unstack(q.reshape([batch * heads, length, dim]));
  const kts = tf.unstack(k.reshape([batch * heads, length, dim]).transpose([0, 2, 1]));
  const vs = tf.unstack(v.reshape([batch * heads, length, dim]));
  const outputs = qs.map((qh, i) => matMul2d(tf.softmax(matMul2d(qh, kts[i]).mul(scale).add(mask)), vs[i]));
  return tf.stack(outputs).reshape([batch, heads, length, dim]) as tf.Tensor4D;
}

function attention(x: tf.Tensor2D, weights: ModelWeights, block: number, batch: number, length: number, config: ModelConfig, lora?: LoraAdapter): tf.Tensor2D {
  const tables = positionTables(config, length, ropeFactors(weights));
  const qNorm = weights[`blk.${block}.attn_q_norm.weight`];
  const kNorm = weights[`blk.${block}.attn_k_norm.weight`];
  const q = splitHeads(linear(x, weights, block, 'attn_q', lora), batch, length, config.headCount, config, qNorm, tables);
  const k = expandKv(splitHeads(linear(x, weights, block, 'attn_k', lora), batch, length, config.headCountKv, config, kNorm, tables), config);
  const v = expandKv(splitHeads(linear(x, weights, block, 'attn_v', lora), batch, length, config.headCountKv, config), config);
  const context = causalAttention(q, k, v, tables.causalMask, 1 / Math.sqrt(headDim(config))); // [B, H, T, hd]
  const merged = context.transpose([0, 2, 1, 3]).reshape([batch * length, config.headCount * config.headDim]) as tf.Tensor2D;
  return linear(merged, weights, block, 'attn_output', lora);
}

function feedForward(x: tf.Tensor2D, weights: ModelWeights, block: number, lora?: LoraAdapter): tf.Tensor2D {
  const gate = linear(x, weights, block, 'ffn_gate', lora);
  const up = linear(x, weights, block, 'ffn_up', lora);
  return linear(gate.mul(gate.sigmoid()).mul(up) as tf.Tensor2D, weights, block, 'ffn_down', lora);
}

/**
 * Logits for every position: ids [B, T] int32 -> [B·T, vocab]. Call inside tf.tidy or a
 * gradient function; intermediate tensors are not disposed here.
 */
export function forwardLogits(config: ModelConfig, weights: ModelWeights, ids: tf.Tensor2D, lora?: LoraAdapter): tf.Tensor2D {
  const [batch, length] = ids.shape;
  if (length > config.contextLength) throw new Error(`sequence of ${length} tokens exceeds the context of ${config.contextLength}`);
  const flatIds = ids.reshape([-1]) as tf.Tensor1D;
  const embedding = weights['token_embd.weight'];
  // Frozen (LoRA): a gather, no gradient needed. Trainable: one-hot × matmul (wasm has no gather gradient).
  let x = lora ? (tf.gather(embedding, flatIds) as tf.Tensor2D) : matMul2d(tf.oneHot(flatIds, config.vocabSize), embedding);
  for (let block = 0; block < config.blockCount; block++) {
    const attnIn = rmsNorm(x, weights[`blk.${block}.attn_norm.weight`], config.rmsNormEpsilon);
    x = x.add(attention(attnIn, weights, block, batch, length, config, lora)) as tf.Tensor2D;
    const ffnIn = rmsNorm(x, weights[`blk.${block}.ffn_norm.weight`], config.rmsNormEpsilon);
    x = x.add(feedForward(ffnIn, weights, block, lora)) as tf.Tensor2D;
  }
  const final = rmsNorm(x, weights['output_norm.weight'], config.rmsNormEpsilon);
  if (config.tiedOutput) {
    if (!lora) return tf.matMul(final, embedding, false, true) as tf.Tensor2D;
    return matMul2dFrozen(final, frozenTranspose(embedding)); // the embedding transposed once and kept: it is frozen
  }
  return (lora ? matMul2dFrozen : matMul2d)(final, weights['output.weight']);
}

/**
 * Mean next-token cross-entropy over positions whose mask is 1.
 * inputs/targets: [B, T] int32 (targets are inputs shifted by one); mask: [B, T] float32.
 * Returns a scalar; if the mask is all zero the loss is 0 rather than NaN.
 */
export function maskedLoss(config: ModelConfig, weights: ModelWeights, inputs: tf.Tensor2D, targets: tf.Tensor2D, mask: tf.Tensor2D, lora?: LoraAdapter): tf.Scalar {
  const logits = forwardLogits(config, weights, inputs, lora);
  const logProbs = tf.logSoftmax(logits);
  const targetOneHot = tf.oneHot(targets.reshape([-1]) as tf.Tensor1D, config.vocabSize);
  const tokenLoss = logProbs.mul(targetOneHot).sum(-1).neg(); // [B·T]
  const flatMask = mask.reshape([-1]);
  return tokenLoss.mul(flatMask).sum().div(flatMask.sum().maximum(1)) as tf.Scalar;
}
