/**
 * LoRA fine-tuning of a base GGUF model on chat examples: the function a trainer worker calls.
 *
 * Output layout (Hugging Face Trainer style, so it reads naturally next to PEFT tooling):
 *   <outputDir>/checkpoint-<step>/adapter.gguf + adapter_config.json   every saveSteps
 *   <outputDir>/adapter.gguf + adapter_config.json                     the final adapter
 * Loss is computed on assistant tokens only. Determinism: the seed fixes the LoRA init and the
 * batch order, and there is no dropout, so the same inputs give the same losses.
 * Abort: the signal is checked between steps; the run then returns status 'aborted' with the
 * checkpoints written so far (no final adapter), instead of throwing, so partial work is usable.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { initTf } from '../backend.js';
import { tokenizeExamples, type ChatExample, type OverflowPolicy } from '../data/chat-jsonl.js';
import { saveAdapter } from '../gguf/adapter-file.js';
import { loadModelGguf, type LoadedModel } from '../gguf/model-file.js';
import { DEFAULT_TARGET_MODULES, initLora, type LoraAdapter } from '../lora.js';
import { disposeWeights } from '../model/weights.js';
import type { ChatMessage } from '../tokenizer.js';
import { runTrainingLoop, type TrainLog } from './loop.js';
import type { ScheduleKind } from './schedule.js';

export type { TrainLog } from './loop.js';

export interface TrainLoraOptions {
  /** Path of a base GGUF written by this engine, or a model already loaded with loadModelGguf. */
  baseModel: string | LoadedModel;
  /** Recorded as base_model_name_or_path in adapter_config.json; default: the GGUF's general.name. */
  baseModelName?: string;
  train: ReadonlyArray<ChatExample | ChatMessage[]>;
  eval?: ReadonlyArray<ChatExample | ChatMessage[]>;
  outputDir: string;
  lora?: { r?: number; alpha?: number; targetModules?: string[] };
  /** Exactly one of maxSteps / numTrainEpochs (maxSteps wins if both are given). */
  maxSteps?: number;
  numTrainEpochs?: number;
  learningRate: number;
  batchSize: number;
  /** Evaluate every N steps (and always at the end) when eval data is given. */
  evalSteps?: number;
  /** Write a checkpoint every N steps; 0 or undefined: only the final adapter. */
  saveSteps?: number;
  seed: number;
  /** Default: 5% of the steps. */
  warmupSteps?: number;
  schedule?: ScheduleKind;
  weightDecay?: number;
  maxGradNorm?: number;
  /** What to do with conversations longer than the context (default 'reject'). */
  overflow?: OverflowPolicy;
  onLog?: (log: TrainLog) => void | Promise<void>;
  onCheckpoint?: (checkpoint: { step: number; path: string; configPath: string }) => void | Promise<void>;
  signal?: AbortSignal;
}

export interface TrainingArtifact {
  kind: 'checkpoint' | 'adapter';
  step: number;
  /** The GGUF adapter file. */
  path: string;
  /** Its PEFT adapter_config.json. */
  configPath: string;
}

export interface TrainLoraResult {
  status: 'completed' | 'aborted';
  steps: number;
  totalSteps: number;
  artifacts: TrainingArtifact[];
  initialEvalLoss: number;
  finalEvalLoss: number;
  finalTrainLoss: number;
  tokensPerSecond: number;
  wallSeconds: number;
  lora: LoraAdapter['config'];
}

function asExamples(items: ReadonlyArray<ChatExample | ChatMessage[]>): ChatExample[] {
  return items.map((item, i) => (Array.isArray(item) ? { line: i + 1, messages: item } : item));
}

export function resolveTotalSteps(options: Pick<TrainLoraOptions, 'maxSteps' | 'numTrainEpochs' | 'batchSize'>, datasetSize: number): number {
  if (options.maxSteps !== undefined) {
    if (!Number.isInteger(options.maxSteps) || options.maxSteps < 1) throw new Error(`maxSteps must be a positive integer, got ${options.maxSteps}`);
    return options.maxSteps;
  }
  if (options.numTrainEpochs !== undefined && options.numTrainEpochs > 0) return Math.max(1, Math.ceil((options.numTrainEpochs * datasetSize) / options.batchSize));
  throw new Error('set maxSteps or numTrainEpochs');
}

export async function trainLora(options: TrainLoraOptions): Promise<TrainLoraResult> {
  await initTf();
  const started = performance.now();
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${options.batchSize}`);
  if (!(options.learningRate > 0)) throw new Error(`learningRate must be positive, got ${options.learningRate}`);
  const ownsBase = typeof options.baseModel === 'string';
  const base = typeof options.baseModel === 'string' ? await loadModelGguf(options.baseModel) : options.baseModel;
  const baseModelName = options.baseModelName ?? base.config.name;
  const overflow = options.overflow ?? 'reject';
  const train = tokenizeExamples(asExamples(options.train), base.config.contextLength, overflow);
  const evalSet = options.eval?.length ? tokenizeExamples(asExamples(options.eval), base.config.contextLength, overflow) : undefined;
  const totalSteps = resolveTotalSteps(options, train.length);
  const adapter = initLora(
    base.config,
    { r: options.lora?.r ?? 8, alpha: options.lora?.alpha ?? 16, targetModules: options.lora?.targetModules ?? DEFAULT_TARGET_MODULES },
    options.seed,
  );
  await mkdir(options.outputDir, { recursive: true });
  const artifacts: TrainingArtifact[] = [];
  const save = async (kind: TrainingArtifact['kind'], step: number) => {
    const dir = kind === 'adapter' ? options.outputDir : join(options.outputDir, `checkpoint-${step}`);
    await mkdir(dir, { recursive: true });
    const artifact = { kind, step, path: join(dir, 'adapter.gguf'), configPath: join(dir, 'adapter_config.json') };
    await saveAdapter(adapter, baseModelName, artifact.path, artifact.configPath);
    artifacts.push(artifact);
    return artifact;
  };
  try {
    const result = await runTrainingLoop({
      target: { kind: 'lora', config: base.config, base: base.weights, adapter },
      train,
      eval: evalSet,
      totalSteps,
      batchSize: options.batchSize,
      learningRate: options.learningRate,
      warmupSteps: options.warmupSteps ?? Math.floor(totalSteps * 0.05),
      schedule: options.schedule ?? 'cosine',
      seed: options.seed,
      evalSteps: options.evalSteps,
      weightDecay: options.weightDecay ?? 0,
      maxGradNorm: options.maxGradNorm ?? 1,
      signal: options.signal,
      onLog: options.onLog,
      afterStep: async (step) => {
        if (options.saveSteps && step % options.saveSteps === 0) {
          const checkpoint = await save('checkpoint', step);
          await options.onCheckpoint?.({ step, path: checkpoint.path, configPath: checkpoint.configPath });
        }
      },
    });
    if (!result.aborted) await save('adapter', result.steps);
    return {
      status: result.aborted ? 'aborted' : 'completed',
      steps: result.steps,
      totalSteps,
      artifacts,
      initialEvalLoss: result.initialEvalLoss,
      finalEvalLoss: result.finalEvalLoss,
      finalTrainLoss: result.finalTrainLoss,
      tokensPerSecond: result.tokensPerSecond,
      wallSeconds: (performance.now() - started) / 1000,
      lora: adapter.config,
    };
  } finally {
    disposeWeights(adapter.weights);
    if (ownsBase) disposeWeights(base.weights);
  }
}
