/**
 * The hyper-parameters of the quickstart fine-tune (examples/quickstart/data on svc-tiny), kept
 * in one place so the example project, the benchmark and the tests agree. They are small enough
 * that the JSON answer format is learned in a first run a user waits for on one core.
 */
import type { TrainLoraOptions } from './lora-trainer.js';

export const QUICKSTART_HYPERPARAMETERS = {
  lora: { r: 8, alpha: 16, targetModules: ['q_proj', 'v_proj', 'o_proj'] },
  maxSteps: 60,
  learningRate: 3e-3,
  batchSize: 8,
  evalSteps: 10,
  saveSteps: 20,
  seed: 1,
} satisfies Partial<TrainLoraOptions>;
