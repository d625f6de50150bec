/**
 * LoRA fine-tuning of a base GGUF model on chat examples: the function a trainer worker calls,
 * on any compute backend (engine/backends/: tfjs in process, or torch in a Python process).
 *
 * Output layout (Hugging Face Trainer style, so it reads naturally next to PEFT tooling):
 *   <outputDir>/checkpoint-<step>/adapter.gguf + adapter_model.safetensors + adapter_config.json
 *   <outputDir>/adapter.gguf + adapter_model.safetensors + adapter_config.json   (final)
 * adapter.gguf is what llama.cpp loads on the unmodified base file; the safetensors + config pair
 * is the PEFT adapter (engine/gguf/peft.ts). Loss is computed on assistant tokens only.
 * Determinism: the seed fixes the LoRA init (drawn here, not by the backend, so every backend
 * starts from the same numbers) and the batch order; there is no dropout.
 * Abort: the signal is checked between steps; the run then returns status 'aborted' with the
 * checkpoints written so far (no final adapter), instead of throwing, so partial work is usable.
 */
import { mkdir } from 'node:fs/promises';
import { availableMemory } from '../memory.js';
import { join } from 'node:path';
import { assertTfjsTrains, estimateTfjsMemory, TFJS_HEAP_LIMIT_BYTES, TfjsBackend } from '../backends/tfjs.js';
import type { ComputeBackend, LoadProgress, OptimizerSettings } from '../backends/types.js';
import { defaultMaxSeqLength, tokenizeExamples, type ChatExample, type OverflowPolicy } from '../data/chat-jsonl.js';
import { byteChatTokenizer, type ChatTokenizer } from '../data/chat-tokenizer.js';
import { loadModelChatTokenizer } from '../data/model-chat-tokenizer.js';
import { writeAdapterGguf } from '../gguf/adapter-file.js';
import { readTrainableModelConfig, type LoadedModel } from '../gguf/model-file.js';
import { writePeftAdapter } from '../gguf/peft.js';
import { DEFAULT_TARGET_MODULES, initLoraTensors, loraSpec, validateLoraConfig, type LoraConfig } from '../lora.js';
import type { ModelConfig } from '../model/config.js';
import { weightShapes } from '../model/weights.js';
import type { ChatMessage } from '../tokenizer.js';
import { runTrainingLoop, type EarlyStopping, type LoopModel, type LoopResult, type TrainLog } from './loop.js';
import type { ScheduleKind } from './schedule.js';

export type { EarlyStopping, EvalMetric, TrainLog } from './loop.js';

export interface TrainLoraOptions {
  /** Path of a base GGUF, or a model already loaded with loadModelGguf (tfjs only). */
  baseModel: string | LoadedModel;
  /**
   * The Hugging Face folder the base GGUF was converted from: the torch backend trains from its
   * safetensors (tokenizer, names and serving stay the GGUF's); tfjs reads the GGUF regardless.
   */
  baseHfFolder?: string;
  /** Recorded as base_model_name_or_path in adapter_config.json; default: the GGUF's general.name. */
  baseModelName?: string;
  /** Where the tensor work happens; default: a tfjs backend this call creates and frees. A given backend is not disposed. */
  backend?: ComputeBackend;
  /**
   * How conversations become tokens and loss masks. Default: the base file's own tokenizer and
   * chat template (svc's byte template for the svc-tiny family, and for an already loaded model).
   * A given tokenizer is not disposed.
   */
  tokenizer?: ChatTokenizer;
  /** Longest conversation in tokens; default: the smaller of the model's context and 1024 (svc-tiny: its context). */
  maxSeqLength?: number;
  train: ReadonlyArray<ChatExample | ChatMessage[]>;
  eval?: ReadonlyArray<ChatExample | ChatMessage[]>;
  outputDir: string;
  lora?: { r?: number; alpha?: number; targetModules?: string[] };
  /** Exactly one of maxSteps / numTrainEpochs (maxSteps wins if both are given). */
  maxSteps?: number;
  numTrainEpochs?: number;
  learningRate: number;
  /** Examples per step, per rank where the backend trains as several (BackendInfo.worldSize). */
  batchSize: number;
  /** Evaluate every N steps (and always at the end) when eval data is given. */
  evalSteps?: number;
  /** Also evaluate before the first step, for `initialEvalLoss` (default true; never reported through onLog). */
  evaluateBeforeTraining?: boolean;
  /** Stop when the eval metric has not improved for `patience` evaluations (needs eval data); the final adapter is the stopping step's. */
  earlyStopping?: EarlyStopping;
  /** Write a checkpoint every N steps; 0 or undefined: only the final adapter. */
  saveSteps?: number;
  seed: number;
  /** Default: 5% of the steps. */
  warmupSteps?: number;
  schedule?: ScheduleKind;
  weightDecay?: number;
  maxGradNorm?: number;
  /** What to do with conversations longer than maxSeqLength (default 'reject'). */
  overflow?: OverflowPolicy;
  onLog?: (log: TrainLog) => void | Promise<void>;
  /** Loading the base weights, tensor by tensor. */
  onLoadProgress?: (progress: LoadProgress) => void;
  /** Things the user should know that do not stop the run (e.g. a fallback chat template). */
  onNotice?: (message: string) => void;
  onCheckpoint?: (checkpoint: TrainingArtifact) => void | Promise<void>;
  signal?: AbortSignal;
}

export interface TrainingArtifact {
  kind: 'checkpoint' | 'adapter';
  step: number;
  /** The GGUF adapter file. */
  path: string;
  /** Its PEFT adapter_config.json. */
  configPath: string;
  /** Its PEFT adapter_model.safetensors. */
  safetensorsPath: string;
}

export interface TrainLoraResult {
  status: 'completed' | 'aborted';
  steps: number;
  totalSteps: number;
  artifacts: TrainingArtifact[];
  /** NaN without eval data or with `evaluateBeforeTraining: false`. */
  initialEvalLoss: number;
  finalEvalLoss: number;
  /** Eval token accuracy before the first step and after the last (NaN as for the losses). */
  initialEvalTokenAccuracy: number;
  finalEvalTokenAccuracy: number;
  /** Set when early stopping ended the run before its last step. */
  stoppedEarly?: LoopResult['stoppedEarly'];
  finalTrainLoss: number;
  tokensPerSecond: number;
  wallSeconds: number;
  lora: LoraConfig;
}

function asExamples(items: ReadonlyArray<ChatExample | ChatMessage[]>): ChatExample[] {
  return items.map((item, i) => (Array.isArray(item) ? { line: i + 1, messages: item } : item));
}

export function resolveTotalSteps(options: Pick<TrainLoraOptions, 'maxSteps' | 'numTrainEpochs' | 'batchSize'>, datasetSize: number): number {
  if (options.maxSteps !== undefined) {
    if (!Number.isInteger(options.maxSteps) || options.maxSteps < 1) throw new Error(`maxSteps must be a positive integer, got ${options.maxSteps}`);
    return options.maxSteps;
  }
  if (options.numTrainEpochs !== undefined && options.numTrainEpochs > 0)
    return Math.max(1, Math.ceil((options.numTrainEpochs * datasetSize) / options.batchSize));
  throw new Error('set maxSteps or numTrainEpochs');
}

export function countModelParameters(config: ModelConfig): number {
  return config.parameterCount ?? weightShapes(config).reduce((sum, [, shape]) => sum + shape.reduce((a, b) => a * b, 1), 0);
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

/**
 * Refuses, before anything is loaded, a run that cannot fit: on tfjs the 4 GiB wasm heap; on a
 * CPU backend the machine's free memory for the float32 base weights. (A GPU's memory is the
 * torch process's to check.)
 */
export function assertFits(backend: ComputeBackend, config: ModelConfig, batchSize: number, sequenceLength: number): void {
  const parameters = countModelParameters(config);
  if (backend.info.name === 'tfjs') {
    assertTfjsTrains(config);
    const needed = estimateTfjsMemory(config, parameters, batchSize, sequenceLength);
    if (needed > TFJS_HEAP_LIMIT_BYTES) {
      throw new Error(
        `${config.name} (${(parameters / 1e6).toFixed(0)}M parameters) at batch ${batchSize} × ${sequenceLength} tokens needs about ${gib(needed)} on the tfjs backend, whose wasm heap stops at 4 GiB; ` +
          'train it with the torch backend (SVC_TRAIN_BACKEND=torch, needs python3 with torch) or lower batchSize / maxSeqLength',
      );
    }
    return;
  }
  const weights = 4 * parameters;
  const available = availableMemory();
  if (backend.info.device.startsWith('cpu') && weights > available) {
    throw new Error(
      `${config.name} needs about ${gib(weights)} for its float32 weights, but this machine has ${gib(available)} free; close other programs or train on a GPU worker`,
    );
  }
}

const DEFAULT_OPTIMIZER = { beta1: 0.9, beta2: 0.999, epsilon: 1e-8 };

export async function trainLora(options: TrainLoraOptions): Promise<TrainLoraResult> {
  const started = performance.now();
  if (!Number.isInteger(options.batchSize) || options.batchSize < 1) throw new Error(`batchSize must be a positive integer, got ${options.batchSize}`);
  if (!(options.learningRate > 0)) throw new Error(`learningRate must be positive, got ${options.learningRate}`);
  const config = typeof options.baseModel === 'string' ? await readTrainableModelConfig(options.baseModel) : options.baseModel.config;
  const ownsTokenizer = !options.tokenizer;
  const tokenizer = options.tokenizer ?? (typeof options.baseModel === 'string' ? await loadModelChatTokenizer(options.baseModel) : byteChatTokenizer);
  try {
    if (tokenizer.templateSource === 'fallback') options.onNotice?.(FALLBACK_TEMPLATE_NOTICE);
    return await trainWithTokenizer(options, config, tokenizer, started);
  } finally {
    if (ownsTokenizer) await tokenizer.dispose();
  }
}

/** Said when the base GGUF carries no tokenizer.chat_template (engine/data/gguf-chat-tokenizer.ts). */
export const FALLBACK_TEMPLATE_NOTICE =
  'the base model has no chat template (tokenizer.chat_template); training with the ChatML template, which serving also uses for it';

async function trainWithTokenizer(options: TrainLoraOptions, config: ModelConfig, tokenizer: ChatTokenizer, started: number): Promise<TrainLoraResult> {
  const baseModelName = options.baseModelName ?? config.name;
  const maxSeqLength = options.maxSeqLength ?? defaultMaxSeqLength(tokenizer, config.contextLength);
  const overflow = options.overflow ?? 'reject';
  const tokenize = (items: ReadonlyArray<ChatExample | ChatMessage[]>) => tokenizeExamples(asExamples(items), maxSeqLength, overflow, tokenizer);
  const train = tokenize(options.train);
  const evalSet = options.eval?.length ? tokenize(options.eval) : undefined;
  const ownsBackend = !options.backend;
  const backend = options.backend ?? (typeof options.baseModel === 'string' ? new TfjsBackend() : TfjsBackend.fromLoaded(config, options.baseModel.weights));
  // batchSize is per rank (Hugging Face's per_device_train_batch_size): several data-parallel ranks
  // take batchSize × worldSize examples a step, the same steps one process takes at that batch.
  const stepBatch = options.batchSize * (backend.info.worldSize ?? 1);
  const totalSteps = resolveTotalSteps({ ...options, batchSize: stepBatch }, train.length);
  const loraOptions = validateLoraConfig({
    r: options.lora?.r ?? 8,
    alpha: options.lora?.alpha ?? 16,
    targetModules: options.lora?.targetModules ?? DEFAULT_TARGET_MODULES,
  });
  try {
    const longest = Math.max(...train.map((e) => e.ids.length), ...(evalSet ?? []).map((e) => e.ids.length));
    assertFits(backend, config, Math.max(options.batchSize, evalSet ? 16 : 1), longest);
    if (typeof options.baseModel === 'string') {
      await backend.loadBase(options.baseModel, config, options.onLoadProgress, { hfFolder: options.baseHfFolder });
      // Said only for a model that has a folder: which of its two forms was trained is worth knowing.
      if (options.baseHfFolder) {
        const source = (backend as ComputeBackend).baseSource ?? `the GGUF ${options.baseModel} (the ${backend.info.name} backend trains from GGUF files)`;
        options.onNotice?.(`base model weights read from ${source}`);
      }
      const held = (backend as ComputeBackend).weightsNotice;
      if (held) options.onNotice?.(held);
    }
    // The loaded model's own projection shapes where the backend has them (architectures whose layers differ).
    const { config: lora, tensors: initial } = initLoraTensors(config, loraOptions, options.seed, (backend as ComputeBackend).projectionShapes);
    await backend.initLora(loraSpec(lora), initial);
    await mkdir(options.outputDir, { recursive: true });
    const artifacts: TrainingArtifact[] = [];
    const save = async (kind: TrainingArtifact['kind'], step: number): Promise<TrainingArtifact> => {
      const dir = kind === 'adapter' ? options.outputDir : join(options.outputDir, `checkpoint-${step}`);
      await mkdir(dir, { recursive: true });
      const artifact = {
        kind,
        step,
        path: join(dir, 'adapter.gguf'),
        configPath: join(dir, 'adapter_config.json'),
        safetensorsPath: join(dir, 'adapter_model.safetensors'),
      };
      const tensors = await backend.loraTensors();
      await writeAdapterGguf(artifact.path, { config: lora, tensors, architecture: config.architecture, baseModelName });
      await writePeftAdapter({ safetensors: artifact.safetensorsPath, config: artifact.configPath }, tensors, lora, config, baseModelName);
      artifacts.push(artifact);
      return artifact;
    };
    const optimizer: Omit<OptimizerSettings, 'learningRate'> = {
      ...DEFAULT_OPTIMIZER,
      weightDecay: options.weightDecay ?? 0,
      maxGradNorm: options.maxGradNorm ?? 1,
    };
    const model: LoopModel = {
      trainStep: (batch, learningRate) => backend.trainStep(batch, { ...optimizer, learningRate }),
      evalBatch: (batch) => backend.evalBatch(batch),
    };
    const result = await runTrainingLoop({
      model,
      padId: tokenizer.padId,
      train,
      eval: evalSet,
      totalSteps,
      batchSize: stepBatch,
      learningRate: options.learningRate,
      warmupSteps: options.warmupSteps ?? Math.floor(totalSteps * 0.05),
      schedule: options.schedule ?? 'cosine',
      seed: options.seed,
      evalSteps: options.evalSteps,
      evaluateBeforeTraining: options.evaluateBeforeTraining,
      earlyStopping: options.earlyStopping,
      signal: options.signal,
      onLog: options.onLog,
      afterStep: async (step) => {
        if (!options.saveSteps || step % options.saveSteps !== 0) return;
        const checkpoint = await save('checkpoint', step);
        await options.onCheckpoint?.(checkpoint);
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
      initialEvalTokenAccuracy: result.initialEvalTokenAccuracy,
      finalEvalTokenAccuracy: result.finalEvalTokenAccuracy,
      ...(result.stoppedEarly ? { stoppedEarly: result.stoppedEarly } : {}),
      finalTrainLoss: result.finalTrainLoss,
      tokensPerSecond: result.tokensPerSecond,
      wallSeconds: (performance.now() - started) / 1000,
      lora,
    };
  } finally {
    if (ownsBackend) await backend.dispose();
  }
}
