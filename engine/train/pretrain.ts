/**
 * Full-parameter pretraining of a model from a seeded initialisation (used by
 * scripts/pretrain.ts to build the shipped base model). Unlike fine-tuning, the loss covers every
 * token after <|bos|>: the base model must learn how users write as well as how answers look.
 */
import { initTf } from '../backend.js';
import type { ModelConfig } from '../model/config.js';
import { initWeights, type ModelWeights } from '../model/weights.js';
import type { ChatMessage } from '../tokenizer.js';
import { renderChat } from '../tokenizer.js';
import type { TokenizedExample } from './batches.js';
import { runTrainingLoop, type LoopResult, type TrainLog } from './loop.js';
import { AdamW } from './adamw.js';
import { fullModelStepper } from './step.js';
import type { ScheduleKind } from './schedule.js';

export interface PretrainOptions {
  config: ModelConfig;
  conversations: ChatMessage[][];
  evalConversations?: ChatMessage[][];
  seed: number;
  maxSteps: number;
  batchSize: number;
  learningRate: number;
  warmupSteps?: number;
  schedule?: ScheduleKind;
  weightDecay?: number;
  evalSteps?: number;
  /** Start from these weights instead of a fresh init (continued pretraining). */
  initialWeights?: ModelWeights;
  signal?: AbortSignal;
  onLog?: (log: TrainLog) => void;
}

/** Every token except the first carries loss. */
export function toPretrainExample(messages: ChatMessage[], contextLength: number): TokenizedExample {
  const ids = renderChat(messages).ids.slice(0, contextLength);
  return { ids, lossMask: ids.map((_, i) => (i === 0 ? 0 : 1)) };
}

export async function pretrain(options: PretrainOptions): Promise<{ weights: ModelWeights; result: LoopResult }> {
  await initTf();
  const { config } = options;
  const weights = options.initialWeights ?? initWeights(config, options.seed);
  const optimizer = new AdamW({ weightDecay: options.weightDecay ?? 0.1, maxGradNorm: 1 });
  const result = await runTrainingLoop({
    model: fullModelStepper(config, weights, optimizer),
    train: options.conversations.map((c) => toPretrainExample(c, config.contextLength)),
    eval: options.evalConversations?.map((c) => toPretrainExample(c, config.contextLength)),
    totalSteps: options.maxSteps,
    batchSize: options.batchSize,
    learningRate: options.learningRate,
    warmupSteps: options.warmupSteps ?? Math.min(100, Math.floor(options.maxSteps / 10)),
    schedule: options.schedule ?? 'cosine',
    seed: options.seed,
    bucketByLength: true,
    evalSteps: options.evalSteps,
    signal: options.signal,
    onLog: options.onLog,
  }).finally(() => optimizer.dispose());
  return { weights, result };
}
