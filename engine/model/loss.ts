/**
 * Mean masked next-token cross-entropy as one custom-gradient op.
 *
 * Why: the autodiff form (logSoftmax, a one-hot of the targets, multiply, sum) runs several
 * passes over the [tokens, vocabulary] logits, and on tfjs-wasm its Exp and LogSoftmax kernels
 * are scalar loops while Softmax is XNNPACK's vectorised one. Here the forward pass is one softmax; the loss reads just each token's target
 * probability, and the gradient, (softmax − onehot) · mask / count, is written in the same
 * pass, so nothing vocabulary-sized is saved (a copy, on tfjs-wasm) for the backward pass.
 */
import { tf } from '../backend.js';
import { peek } from './tensor-data.js';

/**
 * −log p of the target in one row of logits, from the logits themselves: for a target so
 * unlikely that its float32 softmax probability is subnormal or zero.
 */
function exactTokenLoss(logits: Float32Array, row: number, vocab: number, target: number): number {
  const from = row * vocab;
  let max = -Infinity;
  for (let j = 0; j < vocab; j++) max = Math.max(max, logits[from + j]);
  let sum = 0;
  for (let j = 0; j < vocab; j++) sum += Math.exp(logits[from + j] - max);
  return max + Math.log(sum) - logits[from + target];
}

/** Below this a float32 probability has lost precision (float32's smallest normal is 1.2e-38). */
const SMALLEST_TRUSTED_PROBABILITY = 1e-30;

/** Filled by the loss op: masked tokens whose most likely next token (first of ties) is the target. */
export interface TokenCounts {
  correct: number;
}

/**
 * logits [N, V], targets and mask [N] -> Σ mask·(−log softmax(logits)[target]) / max(Σ mask, 1),
 * a scalar; 0 (not NaN) when the mask is all zero. With `counts`, also counts the masked rows
 * whose argmax is the target (token accuracy), in the same pass over the probabilities.
 */
export function maskedCrossEntropy(logits: tf.Tensor2D, targets: Int32Array, mask: Float32Array, counts?: TokenCounts): tf.Scalar {
  const [rows, vocab] = logits.shape;
  let count = 0;
  for (let i = 0; i < rows; i++) count += mask[i];
  const denominator = Math.max(count, 1);
  const op = tf.customGrad(((logitsIn: tf.Tensor2D) => {
    const probabilities = tf.softmax(logitsIn);
    const p = peek(probabilities);
    const grad = new Float32Array(rows * vocab);
    let total = 0;
    const unlikely: number[] = [];
    for (let i = 0; i < rows; i++) {
      const weight = mask[i] / denominator;
      if (weight === 0) continue;
      const from = i * vocab;
      const target = targets[i];
      const pt = p[from + target];
      if (pt >= SMALLEST_TRUSTED_PROBABILITY) total += mask[i] * -Math.log(pt);
      else unlikely.push(i);
      let best = 0;
      for (let j = 0; j < vocab; j++) {
        const pj = p[from + j];
        grad[from + j] = pj * weight;
        if (pj > p[from + best]) best = j;
      }
      grad[from + target] -= weight;
      if (counts && best === target) counts.correct += mask[i];
    }
    if (unlikely.length > 0) {
      const values = logitsIn.dataSync() as Float32Array;
      for (const i of unlikely) total += mask[i] * exactTokenLoss(values, i, vocab, targets[i]);
    }
    return {
      value: tf.scalar(total / denominator),
      gradFunc: (dy: tf.Scalar) => tf.tensor2d(grad, [rows, vocab]).mul(dy),
    };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(logits) as tf.Scalar;
}
