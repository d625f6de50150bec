/**
 * The steps a run will take, computed the way the trainer takes them: the same step count
 * (`resolveTotalSteps`), the same seeded batch order (`BatchOrder`), batches padded to their
 * longest conversation, and the evaluations the run reports: every evalSteps and at the end
 * (engine/train/loop.ts; the worker makes none before the first step). Imports the engine's
 * training modules (tfjs), so it is loaded lazily.
 */
import { BatchOrder } from "../../engine/train/batches.js";
import { resolveTotalSteps } from "../../engine/train/lora-trainer.js";
import type { DryRunPlan } from "./dryRunReport.js";

export interface PlanInput {
  /** Token counts of the training conversations, in file order. */
  trainLengths: readonly number[];
  /** Token counts of the eval conversations; empty without an eval set. */
  evalLengths: readonly number[];
  batchSize: number;
  maxSteps?: number;
  numTrainEpochs?: number;
  seed: number;
  /** 0 or undefined: evaluate only at the end. */
  evalSteps?: number;
}

/** A padded batch's token count: rows × (longest - 1), the trainer's inputs being ids[0..n-2]. */
const padded = (lengths: readonly number[]) => lengths.length * (Math.max(...lengths) - 1);

/** The batches of every step, as the example indices the trainer will draw. */
export function stepBatches(input: Pick<PlanInput, "trainLengths" | "batchSize" | "seed">, steps: number): number[][] {
  const order = new BatchOrder(input.trainLengths.length, input.batchSize, input.seed);
  return Array.from({ length: steps }, () => order.next());
}

/** The evaluation batches: the eval set in file order, max(batchSize, 16) at a time (as the loop evaluates). */
export function evalBatches(evalLengths: readonly number[], batchSize: number): number[][] {
  const size = Math.max(batchSize, 16);
  const batches: number[][] = [];
  for (let i = 0; i < evalLengths.length; i += size) batches.push(Array.from({ length: Math.min(size, evalLengths.length - i) }, (_, k) => i + k));
  return batches;
}

export function planRun(input: PlanInput): DryRunPlan & { evalPaddedTokens: number } {
  const steps = resolveTotalSteps(input, input.trainLengths.length);
  const paddedTokens = stepBatches(input, steps).reduce((sum, batch) => sum + padded(batch.map((i) => input.trainLengths[i])), 0);
  let evaluations = 0;
  if (input.evalLengths.length > 0) {
    for (let step = 1; step <= steps; step++) if (step === steps || (input.evalSteps ? step % input.evalSteps === 0 : false)) evaluations++;
  }
  const evalPaddedTokens = evalBatches(input.evalLengths, input.batchSize).reduce((sum, batch) => sum + padded(batch.map((i) => input.evalLengths[i])), 0);
  return { steps, batchSize: input.batchSize, epochs: (steps * input.batchSize) / input.trainLengths.length, paddedTokens, evaluations, evalPaddedTokens };
}
