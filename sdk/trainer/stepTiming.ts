/**
 * The dry run's duration estimate, measured rather than guessed: the backend this machine would
 * train on (the worker's choice: the trainer's `backend`, SVC_TRAIN_BACKEND, else auto) loads the
 * base model, and a few optimiser steps on real batches of the dataset are timed on a throwaway
 * adapter, then one evaluation batch. Nothing is kept: the adapter is discarded with the backend.
 * The run's time is then the planned padded tokens at the measured cost per token.
 */
import { chooseBackend, parseBackendChoice } from "../../engine/backends/select.js";
import { packBatch } from "../../engine/train/batches.js";
import { assertFits } from "../../engine/train/lora-trainer.js";
import { initLoraTensors, loraSpec } from "../../engine/lora.js";
import type { ModelConfig } from "../../engine/model/config.js";
import type { RenderedChat } from "../../engine/data/chat-tokenizer.js";
import type { DryRunEstimate, DryRunPlan } from "./dryRunReport.js";
import { evalBatches, stepBatches } from "./dryRunPlan.js";
import type { JobTrainingConfig } from "./config.js";

/**
 * Steps timed after one warm-up step (the first pays for allocations and kernel set-up): up to
 * five, and at least two; after TIMING_BUDGET_S the timing stops (a large model's step is slow).
 * The median step is used: on a busy machine one step can take several times the others.
 */
const MAX_TIMED_STEPS = 5;
const MIN_TIMED_STEPS = 2;
const TIMING_BUDGET_S = 10;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

export interface TimingInput {
  modelFile: string;
  modelConfig: ModelConfig;
  config: Pick<JobTrainingConfig, "backend" | "lora" | "seed" | "batchSize" | "learningRate" | "dtype" | "gradientCheckpointing" | "quantizedBase">;
  train: readonly RenderedChat[];
  eval: readonly RenderedChat[];
  plan: DryRunPlan & { evalPaddedTokens: number };
  padId: number;
}

const seconds = (since: number) => (performance.now() - since) / 1000;

export async function measureEstimate(input: TimingInput): Promise<DryRunEstimate> {
  const { config, plan } = input;
  const choice = parseBackendChoice(config.backend, config.backend ? "backend" : "SVC_TRAIN_BACKEND");
  // Timed as the job will train: the same dtype and checkpointing.
  const { backend, reason } = await chooseBackend(choice, {
    dtype: config.dtype,
    checkpointActivations: config.gradientCheckpointing,
    quantizedBase: config.quantizedBase,
  });
  try {
    const longest = Math.max(...input.train.map((e) => e.ids.length), ...input.eval.map((e) => e.ids.length));
    try {
      assertFits(backend, input.modelConfig, Math.max(config.batchSize, input.eval.length > 0 ? 16 : 1), longest);
    } catch (err) {
      return { available: false, blocking: true, reason: `the run would not fit: ${(err as Error).message}` };
    }
    const loadStarted = performance.now();
    await backend.loadBase(input.modelFile, input.modelConfig);
    const loadSeconds = seconds(loadStarted);
    const { config: lora, tensors } = initLoraTensors(
      input.modelConfig,
      { r: config.lora.r, alpha: config.lora.alpha, targetModules: config.lora.targetModules },
      config.seed,
    );
    await backend.initLora(loraSpec(lora), tensors);

    const optimizer = { learningRate: config.learningRate, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };
    const batches = stepBatches({ trainLengths: input.train.map((e) => e.ids.length), batchSize: config.batchSize, seed: config.seed }, MAX_TIMED_STEPS + 1);
    const perTokenTimes: number[] = [];
    const timingStarted = performance.now();
    for (const [index, rows] of batches.entries()) {
      const batch = packBatch(
        rows.map((i) => input.train[i]),
        input.padId,
      );
      const started = performance.now();
      await backend.trainStep(batch, optimizer);
      if (index === 0) continue; // warm-up
      perTokenTimes.push(seconds(started) / (batch.batchSize * batch.length));
      if (perTokenTimes.length >= MIN_TIMED_STEPS && seconds(timingStarted) > TIMING_BUDGET_S) break;
    }
    const perToken = median(perTokenTimes);

    let evalSeconds = 0;
    if (plan.evaluations > 0) {
      const rows = evalBatches(
        input.eval.map((e) => e.ids.length),
        config.batchSize,
      )[0];
      const batch = packBatch(
        rows.map((i) => input.eval[i]),
        input.padId,
      );
      const started = performance.now();
      await backend.evalBatch(batch);
      evalSeconds = (seconds(started) / (batch.batchSize * batch.length)) * plan.evalPaddedTokens * plan.evaluations;
    }
    const stepSeconds = perToken * plan.paddedTokens;
    return {
      available: true,
      backend: backend.info.name,
      device: backend.info.device,
      reason,
      secondsPerStep: stepSeconds / plan.steps,
      loadSeconds,
      evalSeconds,
      seconds: loadSeconds + stepSeconds + evalSeconds,
    };
  } finally {
    await backend.dispose();
  }
}
