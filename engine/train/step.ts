/**
 * Loss and gradients in tfjs, shared by full pretraining and the tfjs LoRA backend. The only
 * difference between the two is which tensors are trainable: all model weights, or the
 * adapter's A/B matrices with the base weights held constant.
 */
import { tf } from '../backend.js';
import type { LoraAdapter } from '../lora.js';
import type { ModelConfig } from '../model/config.js';
import { maskedLoss } from '../model/forward.js';
import type { TokenCounts } from '../model/loss.js';
import type { ModelWeights } from '../model/weights.js';
import { disposeBatch, toTensors, type Batch } from './batches.js';
import type { AdamW } from './adamw.js';
import type { LoopModel } from './loop.js';

/** What is being trained: the model's own weights, or an adapter on a frozen model. */
export type TrainTarget =
  | { kind: 'full'; config: ModelConfig; weights: ModelWeights }
  | { kind: 'lora'; config: ModelConfig; base: ModelWeights; adapter: LoraAdapter };

export function trainableParams(target: TrainTarget): Record<string, tf.Tensor> {
  return target.kind === 'full' ? target.weights : target.adapter.weights;
}

/** Loss of a batch as a function of the trainable tensors (for tf.valueAndGrads). */
function lossOf(target: TrainTarget, batch: Batch, params: Record<string, tf.Tensor>, counts?: TokenCounts): tf.Scalar {
  if (target.kind === 'full') return maskedLoss(target.config, params, batch.inputs, batch.targets, batch.mask, undefined, counts);
  const adapter: LoraAdapter = { ...target.adapter, weights: params };
  return maskedLoss(target.config, target.base, batch.inputs, batch.targets, batch.mask, adapter, counts);
}

/** Loss value, masked tokens predicted right, and gradients for every trainable tensor; intermediates are freed. */
export function lossAndGrads(target: TrainTarget, batch: Batch): { loss: number; correctTokens: number; grads: Record<string, tf.Tensor> } {
  const params = trainableParams(target);
  const names = Object.keys(params);
  const counts: TokenCounts = { correct: 0 };
  const { value, grads } = tf.tidy(() => {
    const f = (...xs: tf.Tensor[]) => lossOf(target, batch, Object.fromEntries(names.map((n, i) => [n, xs[i]])), counts);
    return tf.valueAndGrads(f)(names.map((n) => params[n]));
  });
  const loss = value.dataSync()[0];
  value.dispose();
  return { loss, correctTokens: counts.correct, grads: Object.fromEntries(names.map((n, i) => [n, grads[i]])) };
}

/**
 * The full-model tfjs stepper for pretraining: every weight is trainable, AdamW in tfjs.
 * (LoRA fine-tuning goes through a compute backend instead: engine/backends/.)
 */
export function fullModelStepper(config: ModelConfig, weights: ModelWeights, optimizer: AdamW): LoopModel {
  const target: TrainTarget = { kind: 'full', config, weights };
  return {
    async trainStep(packed, learningRate) {
      const batch = toTensors(packed);
      try {
        const { loss, correctTokens, grads } = lossAndGrads(target, batch);
        const tokenAccuracy = packed.maskedTokens ? correctTokens / packed.maskedTokens : NaN;
        if (!Number.isFinite(loss)) {
          for (const g of Object.values(grads)) g.dispose();
          return { loss, gradNorm: NaN, tokenAccuracy };
        }
        return { loss, gradNorm: optimizer.apply(weights, grads, learningRate), tokenAccuracy };
      } finally {
        disposeBatch(batch);
      }
    },
    async evalBatch(packed) {
      const batch = toTensors(packed);
      try {
        const counts: TokenCounts = { correct: 0 };
        const loss = tf.tidy(() => lossOf(target, batch, weights, counts));
        const value = loss.dataSync()[0];
        loss.dispose();
        return { lossSum: value * packed.maskedTokens, maskedTokens: packed.maskedTokens, correctTokens: counts.correct };
      } finally {
        disposeBatch(batch);
      }
    },
  };
}
