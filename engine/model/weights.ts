/**
 * The parameters of a llama model as named tfjs tensors, and their seeded initialisation.
 *
 * Names are the GGUF tensor names, so export/import need no mapping table. Linear weights are
 * kept as tfjs [in, out] (x · W); the GGUF writer transposes them to ggml's layout.
 */
import { tf } from '../backend.js';
import { SeededRandom } from '../random.js';
import { disposeFrozenTranspose } from './matmul.js';
import type { ModelConfig } from './config.js';

export type ModelWeights = Record<string, tf.Tensor>;

/** The linear projections of one block, by GGUF short name; each is [in, out]. */
export const BLOCK_LINEARS = ['attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down'] as const;
export type BlockLinear = (typeof BLOCK_LINEARS)[number];

export function linearShape(config: ModelConfig, linear: BlockLinear): [number, number] {
  const d = config.embeddingLength;
  const ff = config.feedForwardLength;
  const qWidth = config.headCount * config.headDim;
  const kvWidth = config.headCountKv * config.headDim;
  switch (linear) {
    case 'attn_q':
      return [d, qWidth];
    case 'attn_k':
    case 'attn_v':
      return [d, kvWidth];
    case 'attn_output':
      return [qWidth, d];
    case 'ffn_gate':
    case 'ffn_up':
      return [d, ff];
    case 'ffn_down':
      return [ff, d];
  }
}

/** Tensors that are not [in, out] linear weights: kept in ggml's row order when converted. */
export function isLinearWeight(name: string): boolean {
  return name !== 'token_embd.weight' && name !== 'rope_freqs.weight' && !name.endsWith('norm.weight') && !name.endsWith('.bias');
}

/**
 * Every tensor of the model with its tfjs shape, in a stable order (also the GGUF order).
 * Which optional tensors exist (biases, q/k norms, output, rope_freqs) follows the config.
 */
export function weightShapes(config: ModelConfig): Array<[string, number[]]> {
  const d = config.embeddingLength;
  const shapes: Array<[string, number[]]> = [['token_embd.weight', [config.vocabSize, d]]];
  if (config.ropeFreqFactors) shapes.push(['rope_freqs.weight', [config.headDim / 2]]);
  for (let b = 0; b < config.blockCount; b++) {
    shapes.push([`blk.${b}.attn_norm.weight`, [d]]);
    for (const linear of BLOCK_LINEARS) {
      if (linear === 'ffn_gate') shapes.push([`blk.${b}.ffn_norm.weight`, [d]]);
      const shape = linearShape(config, linear);
      shapes.push([`blk.${b}.${linear}.weight`, shape]);
      if (config.attentionBias && (linear === 'attn_q' || linear === 'attn_k' || linear === 'attn_v')) shapes.push([`blk.${b}.${linear}.bias`, [shape[1]]]);
      if (config.qkNorm && (linear === 'attn_q' || linear === 'attn_k')) shapes.push([`blk.${b}.${linear}_norm.weight`, [config.headDim]]);
    }
  }
  shapes.push(['output_norm.weight', [d]]);
  if (!config.tiedOutput) shapes.push(['output.weight', [d, config.vocabSize]]);
  return shapes;
}

/**
 * GPT-2 style init: N(0, 0.02), norms at 1, and the two projections that write into the residual
 * stream (attn_output, ffn_down) scaled down by sqrt(2 * blocks) so depth does not blow up the
 * residual at the start of training.
 */
export function initWeights(config: ModelConfig, seed: number): ModelWeights {
  const random = new SeededRandom(seed);
  const residualStd = 0.02 / Math.sqrt(2 * config.blockCount);
  const weights: ModelWeights = {};
  for (const [name, shape] of weightShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    if (name.endsWith('norm.weight') || name === 'rope_freqs.weight') {
      weights[name] = tf.ones(shape);
    } else if (name.endsWith('.bias')) {
      weights[name] = tf.zeros(shape);
    } else {
      const std = name.includes('attn_output') || name.includes('ffn_down') ? residualStd : 0.02;
      weights[name] = tf.tensor(random.normalArray(size, std), shape);
    }
  }
  return weights;
}

export function countParameters(weights: Record<string, tf.Tensor>): number {
  return Object.values(weights).reduce((sum, t) => sum + t.size, 0);
}

export function disposeWeights(weights: Record<string, tf.Tensor>): void {
  for (const t of Object.values(weights)) {
    disposeFrozenTranspose(t);
    t.dispose();
  }
}
