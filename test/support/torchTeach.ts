/**
 * Teaches a fixed continuation on the torch backend and exports the LoRA as a GGUF adapter, so a test
 * can ask llama.cpp (the serving engine) whether it produces the taught answer on the same base.
 */
import assert from "node:assert/strict";
import type { TorchBackend } from "../../engine/backends/torch/index.js";
import { writeAdapterGguf } from "../../engine/gguf/adapter-file.js";
import { readModelConfig } from "../../engine/gguf/model-file.js";
import { DEFAULT_TARGET_MODULES, initLoraTensors, loraSpec } from "../../engine/lora.js";

export interface TeachOptions {
  /** Token ids of the prompt and of the answer the LoRA learns to continue it with. */
  prompt: number[];
  answer: number[];
  adapterPath: string;
  /** Names the run in the test's output. */
  label: string;
  maxSteps: number;
  /** Stops early once the loss is below this. */
  stopBelow: number;
}

/** Loads `gguf` into `backend` (the caller disposes it), trains until the loss falls a tenth, and writes the adapter. */
export async function teachAnswerOnTorch(backend: TorchBackend, gguf: string, options: TeachOptions): Promise<void> {
  const { prompt, answer } = options;
  const config = await readModelConfig(gguf);
  const sequence = [...prompt, ...answer];
  const length = sequence.length - 1;
  const batch = {
    batchSize: 1,
    length,
    inputs: Int32Array.from(sequence.slice(0, -1)),
    targets: Int32Array.from(sequence.slice(1)),
    mask: Float32Array.from({ length }, (_, i) => (i >= prompt.length - 1 ? 1 : 0)),
    maskedTokens: answer.length,
    tokens: length,
  };
  await backend.loadBase(gguf, config);
  const { config: loraConfig, tensors } = initLoraTensors(config, { r: 8, alpha: 16, targetModules: DEFAULT_TARGET_MODULES }, 3, backend.projectionShapes);
  await backend.initLora(loraSpec(loraConfig), tensors);
  const losses: number[] = [];
  const optimizer = { learningRate: 1e-2, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };
  for (let step = 0; step < options.maxSteps && !((losses.at(-1) ?? Infinity) < options.stopBelow); step++) {
    losses.push((await backend.trainStep(batch, optimizer)).loss);
  }
  const [first, last] = [losses[0], losses.at(-1) ?? Number.NaN];
  console.log(`      ${options.label}: loss ${first.toFixed(3)} -> ${last.toFixed(3)} in ${losses.length} steps`);
  assert.ok(last < first / 10, `loss ${first} -> ${last}`);
  await writeAdapterGguf(options.adapterPath, {
    config: loraConfig,
    tensors: await backend.loraTensors(),
    architecture: config.architecture,
    baseModelName: config.name,
  });
}
