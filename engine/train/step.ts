/**
 * One optimisation step and the evaluation pass, shared by full pretraining and LoRA training.
 * The only difference between the two is which tensors are trainable: all model weights, or the
 * adapter's A/B matrices with the base weights held constant.
 */
import { tf } from '../backend.js';
import type { LoraAdapter } from '../lora.js';
import type { ModelConfig } from '../model/config.js';
import { maskedLoss } from '../model/forward.js';
import type { ModelWeights } from '../model/weights.js';
import { disposeBatch, makeBatch, type Batch, type TokenizedExample } from './batches.js';
import type { AdamW } from './adamw.js';

/** What is being trained: the model's own weights, or an adapter on a frozen model. */
export type TrainTarget =
  | { kind: 'full'; config: ModelConfig; weights: ModelWeights }
  | { kind: 'lora'; config: ModelConfig; base: ModelWeights; adapter: LoraAdapter };

export function trainableParams(target: TrainTarget): Record<string, tf.Tensor> {
  return target.kind === 'full' ? target.weights : target.adapter.weights;
}

/** Loss of a batch as a function of the trainable tensors (for tf.valueAndGrads). */
function lossOf(target: TrainTarget, batch: Batch, params: Record<string, tf.Tensor>): tf.Scalar {
  if (target.kind === 'full') return maskedLoss(target.config, params, batch.inputs, batch.targets, batch.mask);
  const adapter: LoraAdapter = { ...target.adapter, weights: params };
  return maskedLoss(target.config, target.base, batch.inputs, batch.targets, batch.mask, adapter);
}

/** Loss value and gradients for every trainable tensor; intermediates are freed. */
export function lossAndGrads(target: TrainTarget, batch: Batch): { loss: number; grads: Record<string, tf.Tensor> } {
  const params = trainableParams(target);
  const names = Object.keys(params);
  const { value, grads } = tf.tidy(() => {
    const f = (...xs: tf.Tensor[]) => lossOf(target, batch, Object.fromEntries(names.map((n, i) => [n, xs[i]])));
    return tf.valueAndGrads(f)(names.map((n) => params[n]));
  });
  const loss = value.dataSync()[0];
  value.dispose();
  return { loss, grads: Object.fromEntries(names.map((n, i) => [n, grads[i]])) };
}

export interface StepResult {
  loss: number;
  gradNorm: number;
  /** Non-padding tokens pushed through the model in this step. */
  tokens: number;
}

/** Forward + backward + AdamW update on one batch of examples. */
export function trainStep(target: TrainTarget, optimizer: AdamW, examples: readonly TokenizedExample[], learningRate: number): StepResult {
  const batch = makeBatch(examples);
  try {
    const { loss, grads } = lossAndGrads(target, batch);
    if (!Number.isFinite(loss)) {
      for (const g of Object.values(grads)) g.dispose();
      throw new Error(`training diverged: loss is ${loss}; try a lower learning rate`);
    }
    const gradNorm = optimizer.apply(trainableParams(target), grads, learningRate);
    return { loss, gradNorm, tokens: batch.tokens };
  } finally {
    disposeBatch(batch);
  }
}

/** Token-weighted mean loss over a dataset (each masked token counts once). */
export function evaluateLoss(target: TrainTarget, examples: readonly TokenizedExample[], batchSize: number): number {
  let weighted = 0;
  let count = 0;
  for (let i = 0; i < examples.length; i += batchSize) {
    const batch = makeBatch(examples.slice(i, i + batchSize));
    try {
      if (batch.maskedTokens === 0) continue;
      const loss = tf.tidy(() => lossOf(target, batch, trainableParams(target)));
      weighted += loss.dataSync()[0] * batch.maskedTokens;
      count += batch.maskedTokens;
      loss.dispose();
    } finally {
      disposeBatch(batch);
    }
  }
  return count ? weighted / count : NaN;
}
