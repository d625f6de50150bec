/**
 * The training loop shared by pretraining and LoRA fine-tuning on every compute backend: seeded
 * batch order, warm-up + decay schedule, periodic evaluation, logging, and cooperative abort. The
 * tensor work (forward, backward, the AdamW update) is the model's: a compute backend
 * (engine/backends/) for LoRA, the tfjs full-model stepper for pretraining.
 *
 * tfjs-wasm blocks the event loop while it computes, so the loop yields to it between steps
 * (setImmediate): that is when an AbortSignal fired by a worker's message handler becomes
 * visible. A step is kept well under a second, so abort takes effect within about one step.
 */
import type { EvalResult, StepResult, TokenBatch } from '../backends/types.js';
import { BatchOrder, packBatch, type TokenizedExample } from './batches.js';
import { learningRateAt, type ScheduleKind } from './schedule.js';

/** What the loop trains: one optimiser step per batch, and evaluation. */
export interface LoopModel {
  /** Forward, backward and update; loss is the mean over masked tokens. */
  trainStep(batch: TokenBatch, learningRate: number): Promise<StepResult>;
  /** Summed masked cross-entropy, the number of masked tokens, and those predicted right. */
  evalBatch(batch: TokenBatch): Promise<EvalResult>;
}

export interface TrainLog {
  step: number;
  loss: number;
  /** Share of this step's masked tokens whose most likely next token was the target. */
  tokenAccuracy: number;
  /** Present on evaluation steps (every evalSteps, and the last step) when eval data exists. */
  evalLoss?: number;
  /** Token accuracy over the eval set, beside evalLoss. */
  evalTokenAccuracy?: number;
  learningRate: number;
  /** Fractional epochs of training data consumed so far. */
  epoch: number;
  /** Non-padding tokens per second over this step (forward + backward + update). */
  tokensPerSecond: number;
  gradNorm: number;
}

/** An evaluation metric early stopping and the best checkpoint are judged by. */
export type EvalMetric = 'evalLoss' | 'evalTokenAccuracy';

/** Stop once `metric` has not improved for `patience` evaluations in a row. */
export interface EarlyStopping {
  metric: EvalMetric;
  patience: number;
}

/** Whether `value` beats `best` on `metric` (lower loss, higher accuracy); any number beats NaN. */
export function improves(metric: EvalMetric, value: number, best: number): boolean {
  if (!Number.isFinite(value)) return false;
  if (!Number.isFinite(best)) return true;
  return metric === 'evalLoss' ? value < best : value > best;
}

export interface LoopOptions {
  model: LoopModel;
  /** Token id used for padding (any valid id: padded positions carry no loss). */
  padId?: number;
  train: TokenizedExample[];
  eval?: TokenizedExample[];
  totalSteps: number;
  batchSize: number;
  learningRate: number;
  warmupSteps: number;
  schedule: ScheduleKind;
  seed: number;
  /** Group similar lengths into batches (less padding); worth it on large datasets. */
  bucketByLength?: boolean;
  /** Evaluate every this many steps (0 or undefined: only at the end). */
  evalSteps?: number;
  /**
   * Evaluate once before the first step, for `initialEvalLoss` (default true). It reaches no
   * `onLog`: a caller that reports only what onLog sees (the cloud's worker) turns it off rather
   * than spend an evaluation nobody is shown.
   */
  evaluateBeforeTraining?: boolean;
  /** Stop when the eval metric stops improving (needs eval data). */
  earlyStopping?: EarlyStopping;
  signal?: AbortSignal;
  onLog?: (log: TrainLog) => void | Promise<void>;
  /** Runs after every completed step (checkpointing lives here). */
  afterStep?: (step: number) => void | Promise<void>;
}

export interface LoopResult {
  /** Optimiser steps actually completed. */
  steps: number;
  aborted: boolean;
  /** Eval loss before the first update (NaN without eval data, or with `evaluateBeforeTraining: false`). */
  initialEvalLoss: number;
  /** Eval loss after the last completed step (NaN without eval data). */
  finalEvalLoss: number;
  /** Eval token accuracy before the first update and after the last step (NaN as for the losses). */
  initialEvalTokenAccuracy: number;
  finalEvalTokenAccuracy: number;
  finalTrainLoss: number;
  /** Mean tokens/s over all steps. */
  tokensPerSecond: number;
  /** Set when early stopping ended the run: the step it stopped at, and the best evaluation seen. */
  stoppedEarly?: { step: number; metric: EvalMetric; bestStep: number; bestValue: number };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface DatasetEvaluation {
  /** Token-weighted mean loss (each masked token counts once). */
  loss: number;
  /** Masked tokens predicted right over all masked tokens. */
  tokenAccuracy: number;
}

/** Loss and token accuracy over a dataset; both NaN when nothing is masked. */
export async function evaluateDataset(model: LoopModel, examples: readonly TokenizedExample[], batchSize: number, padId?: number): Promise<DatasetEvaluation> {
  let weighted = 0;
  let count = 0;
  let correct = 0;
  for (let i = 0; i < examples.length; i += batchSize) {
    const batch = packBatch(examples.slice(i, i + batchSize), padId);
    if (batch.maskedTokens === 0) continue;
    const result = await model.evalBatch(batch);
    weighted += result.lossSum;
    count += result.maskedTokens;
    correct += result.correctTokens;
  }
  return count ? { loss: weighted / count, tokenAccuracy: correct / count } : { loss: NaN, tokenAccuracy: NaN };
}

const NOT_EVALUATED: DatasetEvaluation = { loss: NaN, tokenAccuracy: NaN };

export async function runTrainingLoop(options: LoopOptions): Promise<LoopResult> {
  const { model, train, totalSteps, batchSize, padId } = options;
  if (train.length === 0) throw new Error('no training examples');
  if (!(totalSteps >= 1)) throw new Error('totalSteps must be at least 1');
  const evalSet = options.eval?.length ? options.eval : undefined;
  const evalBatch = Math.max(batchSize, 16);
  const evaluate = (examples: readonly TokenizedExample[]) => evaluateDataset(model, examples, evalBatch, padId);
  const order = new BatchOrder(train.length, batchSize, options.seed, options.bucketByLength ? train.map((e) => e.ids.length) : undefined);
  const initial = evalSet && options.evaluateBeforeTraining !== false ? await evaluate(evalSet) : NOT_EVALUATED;
  let final = initial;
  let finalTrainLoss = NaN;
  let totalTokens = 0;
  let totalSeconds = 0;
  let steps = 0;
  let aborted = false;
  const stopping = evalSet ? options.earlyStopping : undefined;
  let best = { step: 0, value: NaN };
  let stale = 0;
  let stoppedEarly: LoopResult['stoppedEarly'];
  for (let step = 1; step <= totalSteps; step++) {
    await yieldToEventLoop();
    if (options.signal?.aborted) {
      aborted = true;
      break;
    }
    const learningRate = learningRateAt(step, { peak: options.learningRate, totalSteps, warmupSteps: options.warmupSteps, kind: options.schedule });
    const started = performance.now();
    const batch = packBatch(
      order.next().map((i) => train[i]),
      padId,
    );
    const result = await model.trainStep(batch, learningRate);
    if (!Number.isFinite(result.loss)) throw new Error(`training diverged: loss is ${result.loss}; try a lower learning rate`);
    const seconds = (performance.now() - started) / 1000;
    steps = step;
    totalTokens += batch.tokens;
    totalSeconds += seconds;
    finalTrainLoss = result.loss;
    const isEvalStep = evalSet !== undefined && (step === totalSteps || (options.evalSteps ? step % options.evalSteps === 0 : false));
    let evaluation: DatasetEvaluation | undefined;
    if (isEvalStep) final = evaluation = await evaluate(evalSet);
    await options.onLog?.({
      step,
      loss: result.loss,
      tokenAccuracy: result.tokenAccuracy,
      ...(evaluation !== undefined ? { evalLoss: evaluation.loss, evalTokenAccuracy: evaluation.tokenAccuracy } : {}),
      learningRate,
      epoch: order.epochProgress,
      tokensPerSecond: batch.tokens / Math.max(seconds, 1e-9),
      gradNorm: result.gradNorm,
    });
    await options.afterStep?.(step);
    if (stopping && evaluation) {
      const value = stopping.metric === 'evalLoss' ? evaluation.loss : evaluation.tokenAccuracy;
      if (improves(stopping.metric, value, best.value)) {
        best = { step, value };
        stale = 0;
      } else if (++stale >= stopping.patience && step < totalSteps) {
        stoppedEarly = { step, metric: stopping.metric, bestStep: best.step, bestValue: best.value };
        break;
      }
    }
  }
  if (aborted && evalSet && steps > 0) final = await evaluate(evalSet);
  return {
    steps,
    aborted,
    initialEvalLoss: initial.loss,
    finalEvalLoss: final.loss,
    initialEvalTokenAccuracy: initial.tokenAccuracy,
    finalEvalTokenAccuracy: final.tokenAccuracy,
    finalTrainLoss,
    tokensPerSecond: totalTokens / Math.max(totalSeconds, 1e-9),
    ...(stoppedEarly ? { stoppedEarly } : {}),
  };
}
