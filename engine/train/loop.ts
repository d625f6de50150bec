/**
 * The training loop shared by pretraining and LoRA fine-tuning: seeded batch order, warm-up +
 * decay schedule, AdamW with clipping, periodic evaluation, logging, and cooperative abort.
 *
 * tfjs-wasm blocks the event loop while it computes, so the loop yields to it between steps
 * (setImmediate): that is when an AbortSignal fired by a worker's message handler becomes
 * visible. A step is kept well under a second, so abort takes effect within about one step.
 */
import { AdamW } from './adamw.js';
import { BatchOrder, type TokenizedExample } from './batches.js';
import { learningRateAt, type ScheduleKind } from './schedule.js';
import { evaluateLoss, trainStep, type TrainTarget } from './step.js';

export interface TrainLog {
  step: number;
  loss: number;
  /** Present on evaluation steps (every evalSteps, and the last step) when eval data exists. */
  evalLoss?: number;
  learningRate: number;
  /** Fractional epochs of training data consumed so far. */
  epoch: number;
  /** Non-padding tokens per second over this step (forward + backward + update). */
  tokensPerSecond: number;
  gradNorm: number;
}

export interface LoopOptions {
  target: TrainTarget;
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
  weightDecay?: number;
  maxGradNorm?: number;
  signal?: AbortSignal;
  onLog?: (log: TrainLog) => void | Promise<void>;
  /** Runs after every completed step (checkpointing lives here). */
  afterStep?: (step: number) => void | Promise<void>;
}

export interface LoopResult {
  /** Optimiser steps actually completed. */
  steps: number;
  aborted: boolean;
  /** Eval loss before the first update (NaN without eval data). */
  initialEvalLoss: number;
  /** Eval loss after the last completed step (NaN without eval data). */
  finalEvalLoss: number;
  finalTrainLoss: number;
  /** Mean tokens/s over all steps. */
  tokensPerSecond: number;
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function runTrainingLoop(options: LoopOptions): Promise<LoopResult> {
  const { target, train, totalSteps, batchSize } = options;
  if (train.length === 0) throw new Error('no training examples');
  if (!(totalSteps >= 1)) throw new Error('totalSteps must be at least 1');
  const evalSet = options.eval?.length ? options.eval : undefined;
  const evalBatch = Math.max(batchSize, 16);
  const order = new BatchOrder(train.length, batchSize, options.seed, options.bucketByLength ? train.map((e) => e.ids.length) : undefined);
  const optimizer = new AdamW({ weightDecay: options.weightDecay ?? 0, maxGradNorm: options.maxGradNorm ?? 1 });
  const initialEvalLoss = evalSet ? evaluateLoss(target, evalSet, evalBatch) : NaN;
  let finalEvalLoss = initialEvalLoss;
  let finalTrainLoss = NaN;
  let totalTokens = 0;
  let totalSeconds = 0;
  let steps = 0;
  let aborted = false;
  try {
    for (let step = 1; step <= totalSteps; step++) {
      await yieldToEventLoop();
      if (options.signal?.aborted) {
        aborted = true;
        break;
      }
      const learningRate = learningRateAt(step, { peak: options.learningRate, totalSteps, warmupSteps: options.warmupSteps, kind: options.schedule });
      const started = performance.now();
      const batch = order.next().map((i) => train[i]);
      const result = trainStep(target, optimizer, batch, learningRate);
      const seconds = (performance.now() - started) / 1000;
      steps = step;
      totalTokens += result.tokens;
      totalSeconds += seconds;
      finalTrainLoss = result.loss;
      const isEvalStep = evalSet !== undefined && (step === totalSteps || (options.evalSteps ? step % options.evalSteps === 0 : false));
      let evalLoss: number | undefined;
      if (isEvalStep) finalEvalLoss = evalLoss = evaluateLoss(target, evalSet, evalBatch);
      await options.onLog?.({
        step,
        loss: result.loss,
        ...(evalLoss !== undefined ? { evalLoss } : {}),
        learningRate,
        epoch: order.epochProgress,
        tokensPerSecond: result.tokens / Math.max(seconds, 1e-9),
        gradNorm: result.gradNorm,
      });
      await options.afterStep?.(step);
    }
  } finally {
    optimizer.dispose();
  }
  if (aborted && evalSet && steps > 0) finalEvalLoss = evaluateLoss(target, evalSet, evalBatch);
  return { steps, aborted, initialEvalLoss, finalEvalLoss, finalTrainLoss, tokensPerSecond: totalTokens / Math.max(totalSeconds, 1e-9) };
}
