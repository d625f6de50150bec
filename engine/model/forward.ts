/**
 * Forward pass and loss of the llama architecture in tfjs, written to match llama.cpp's `llama`
 * graph exactly (so greedy decoding agrees token for token):
 *   x = embed(ids); per block: x += Wo·attn(rope(Wq·n), rope(Wk·n), Wv·n) with n = rmsnorm(x);
 *   x += Wdown·(silu(Wgate·n) ⊙ Wup·n) with n = rmsnorm(x); logits = Wout·rmsnorm(x).
 * Two wasm-backend constraints shape the code: gather has no gradient there, so the embedding is
 * one-hot × matmul; and everything position-dependent (RoPE tables, causal mask) is a cached
 * constant so a training step builds no per-step tables.
 */
import { tf } from '../backend.js';
import type { LoraAdapter } from '../lora.js';
import { headDim, type ModelConfig } from './config.js';
import { matMul2d, matMul2dFrozen } from './matmul.js';
import type { BlockLinear, ModelWeights } from './weights.js';

interface PositionTables {
  cos: tf.Tensor2D; // [T, headDim], each angle repeated for the two members of its pair
  sin: tf.Tensor2D; // [T, headDim]
  pairSwap: tf.Tensor2D; // [headDim, headDim]: (x0, x1) -> (-x1, x0) per adjacent pair
  causalMask: tf.Tensor2D; // [T, T]: 0 on/below the diagonal, -1e9 above
}

const tableCache = new Map<string, PositionTables>();

/**
 * llama.cpp's "normal" RoPE (LLAMA_ROPE_TYPE_NORM) rotates adjacent pairs (2i, 2i+1) by
 * pos · base^(-2i/headDim). Rotation = x·cos + pairSwap(x)·sin, with the swap as a fixed matmul.
 */
function positionTables(config: ModelConfig, length: number): PositionTables {
  const dim = headDim(config);
  const key = `${dim}:${config.ropeFreqBase}:${length}`;
  const cached = tableCache.get(key);
  if (cached) return cached;
  const cos = new Float32Array(length * dim);
  const sin = new Float32Array(length * dim);
  for (let pos = 0; pos < length; pos++) {
    for (let i = 0; i < dim / 2; i++) {
      const angle = pos * Math.pow(config.ropeFreqBase, (-2 * i) / dim);
      cos[pos * dim + 2 * i] = cos[pos * dim + 2 * i + 1] = Math.cos(angle);
      sin[pos * dim + 2 * i] = sin[pos * dim + 2 * i + 1] = Math.sin(angle);
    }
  }
  const swap = new Float32Array(dim * dim);
  for (let i = 0; i < dim; i += 2) {
    swap[(i + 1) * dim + i] = -1; // out[i]   = -x[i+1]
    swap[i * dim + i + 1] = 1; //    out[i+1] =  x[i]
  }
  const mask = new Float32Array(length * length);
  for (let q = 0; q < length; q++) for (let k = q + 1; k < length; k++) mask[q * length + k] = -1e9;
  const tables: PositionTables = {
    cos: tf.keep(tf.tensor2d(cos, [length, dim])),
    sin: tf.keep(tf.tensor2d(sin, [length, dim])),
    pairSwap: tf.keep(tf.tensor2d(swap, [dim, dim])),
    causalMask: tf.keep(tf.tensor2d(mask, [length, length])),
  };
  tableCache.set(key, tables);
  return tables;
}

function rmsNorm(x: tf.Tensor2D, weight: tf.Tensor, eps: number): tf.Tensor2D {
  const meanSquare = x.square().mean(-1, true);
  return x.mul(meanSquare.add(eps).rsqrt()).mul(weight) as tf.Tensor2D;
}

/** x · W, plus the LoRA update (x · A) · B · scaling when the adapter targets this projection. */
function linear(x: tf.Tensor2D, weights: ModelWeights, block: number, name: BlockLinear, lora?: LoraAdapter): tf.Tensor2D {
  const base = `blk.${block}.${name}.weight`;
  // With an adapter the base weights are frozen: skip their (discarded) gradients.
  let y = lora ? matMul2dFrozen(x, weights[base]) : matMul2d(x, weights[base]);
  const a = lora?.weights[`${base}.lora_a`] as tf.Tensor2D | undefined;
  const b = lora?.weights[`${base}.lora_b`] as tf.Tensor2D | undefined;
  if (lora && a && b) y = y.add(matMul2d(matMul2d(x, a), b).mul(lora.scaling)) as tf.Tensor2D;
  return y;
}

/** [B·T, d] -> [B, H, T, headDim], with RoPE applied when position tables are given. */
function splitHeads(x: tf.Tensor2D, batch: number, length: number, config: ModelConfig, tables?: PositionTables): tf.Tensor4D {
  const dim = headDim(config);
  let heads = x.reshape([batch, length, config.headCount, dim]).transpose([0, 2, 1, 3]) as tf.Tensor4D;
  if (tables) {
    const swapped = matMul2dFrozen(heads.reshape([-1, dim]), tables.pairSwap).reshape(heads.shape);
    heads = heads.mul(tables.cos).add(swapped.mul(tables.sin)) as tf.Tensor4D;
  }
  return heads;
}

function attention(x: tf.Tensor2D, weights: ModelWeights, block: number, batch: number, length: number, config: ModelConfig, lora?: LoraAdapter): tf.Tensor2D {
  const tables = positionTables(config, length);
  const q = splitHeads(linear(x, weights, block, 'attn_q', lora), batch, length, config, tables);
  const k = splitHeads(linear(x, weights, block, 'attn_k', lora), batch, length, config, tables);
  const v = splitHeads(linear(x, weights, block, 'attn_v', lora), batch, length, config);
  const scores = tf.matMul(q, k, false, true).mul(1 / Math.sqrt(headDim(config))).add(tables.causalMask);
  const context = tf.matMul(tf.softmax(scores), v); // [B, H, T, hd]
  const merged = context.transpose([0, 2, 1, 3]).reshape([batch * length, config.embeddingLength]) as tf.Tensor2D;
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
  const oneHot = tf.oneHot(ids.reshape([-1]) as tf.Tensor1D, config.vocabSize);
  const product = lora ? matMul2dFrozen : matMul2d;
  let x = product(oneHot, weights['token_embd.weight']);
  for (let block = 0; block < config.blockCount; block++) {
    const attnIn = rmsNorm(x, weights[`blk.${block}.attn_norm.weight`], config.rmsNormEpsilon);
    x = x.add(attention(attnIn, weights, block, batch, length, config, lora)) as tf.Tensor2D;
    const ffnIn = rmsNorm(x, weights[`blk.${block}.ffn_norm.weight`], config.rmsNormEpsilon);
    x = x.add(feedForward(ffnIn, weights, block, lora)) as tf.Tensor2D;
  }
  const final = rmsNorm(x, weights['output_norm.weight'], config.rmsNormEpsilon);
  return product(final, weights['output.weight']);
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
