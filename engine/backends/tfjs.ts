/**
 * The tfjs compute backend: the zero-install default. Runs in the worker's own process on the
 * wasm backend (one core, a 4 GiB heap), so it suits svc-tiny and small models; estimateTfjsMemory
 * refuses, before anything is loaded, a model and batch that cannot fit.
 */
import { initTf, tf } from '../backend.js';
import { openModelWeights } from '../gguf/model-file.js';
import { loraAdapterFromTensors, loraTensorsFromAdapter, type LoraAdapter, HF_MODULE_TO_GGUF } from '../lora.js';
import { isLlamaFamily, type ModelConfig } from '../model/config.js';
import { forwardLastLogits, maskedLoss } from '../model/forward.js';
import { disposeWeights, type ModelWeights } from '../model/weights.js';
import { AdamW } from '../train/adamw.js';
import { disposeBatch, toTensors } from '../train/batches.js';
import { lossAndGrads } from '../train/step.js';
import type { TokenCounts } from '../model/loss.js';
import type { BackendInfo, ComputeBackend, EvalResult, LoadProgress, LoraSpec, LoraTensors, OptimizerSettings, StepResult, TokenBatch } from './types.js';

/** The wasm heap's hard ceiling, less room for the runtime and fragmentation. */
export const TFJS_HEAP_LIMIT_BYTES = 3.5 * 2 ** 30;

/**
 * Peak bytes a LoRA step needs on tfjs, fitted to tf.profile peaks of real steps (SmolLM2-135M
 * shapes at 4 blocks and 8-1024 tokens, tied and untied, a d=256 × 4 model at 1280 tokens, a
 * Qwen3-vocabulary model at 8-512 tokens; with the 10% headroom it errs high by 1.1-1.6x):
 *   - the base weights twice: float32, plus the transposes kept for the backward pass;
 *   - per token, about 3 vocabulary-sized float rows (the logits, their softmax, the gradient:
 *     the loss op saves nothing vocabulary-sized), which dominate for real vocabularies;
 *   - per token and block, about 5x the residual stream, attention and MLP widths;
 *   - attention probabilities, per head and sequence (kept for the backward pass), twice.
 */
export function estimateTfjsMemory(config: ModelConfig, parameters: number, batchSize: number, sequenceLength: number): number {
  const tokens = batchSize * sequenceLength;
  const perTokenBlock = 12 * config.embeddingLength + 4 * config.feedForwardLength + 4 * config.headCount * config.headDim;
  const activations = tokens * (3 * config.vocabSize + 5 * config.blockCount * perTokenBlock);
  const attention = config.blockCount * batchSize * config.headCount * sequenceLength * sequenceLength * 2;
  return 1.1 * 4 * (2 * parameters + activations + attention);
}

/** tfjs implements the llama family only; any other architecture is the torch backend's. */
export function assertTfjsTrains(config: ModelConfig): void {
  if (!isLlamaFamily(config.architecture)) {
    throw new Error(
      `${config.architecture} models train on the torch backend (transformers), not tfjs: run \`svc setup torch\`, then train with SVC_TRAIN_BACKEND=auto or torch`,
    );
  }
}

export class TfjsBackend implements ComputeBackend {
  readonly info: BackendInfo = { name: 'tfjs', device: 'wasm (1 thread)', dtype: 'float32' };
  private config?: ModelConfig;
  private base?: ModelWeights;
  private adapter?: LoraAdapter;
  private optimizer?: AdamW;
  private optimizerKey = '';
  /** Weights handed over by fromLoaded belong to the caller. */
  private ownsBase = true;

  /** A model already in memory (tests, the tfjs reference) can be handed over instead of a path. */
  static fromLoaded(config: ModelConfig, weights: ModelWeights): TfjsBackend {
    const backend = new TfjsBackend();
    backend.config = config;
    backend.base = weights;
    backend.ownsBase = false;
    return backend;
  }

  async loadBase(modelPath: string, config: ModelConfig, onProgress?: (progress: LoadProgress) => void): Promise<void> {
    assertTfjsTrains(config);
    await initTf();
    this.config = config;
    this.base = await openModelWeights(modelPath, config, onProgress);
  }

  async initLora(spec: LoraSpec, initial: LoraTensors): Promise<void> {
    await initTf();
    const ggufToHf = new Map(Object.entries(HF_MODULE_TO_GGUF).map(([hf, gguf]) => [gguf, hf]));
    const targetModules = spec.targets.map((t) => ggufToHf.get(t as never) ?? t);
    this.adapter = loraAdapterFromTensors({ r: spec.r, alpha: spec.alpha, targetModules }, initial);
  }

  private target() {
    if (!this.config || !this.base || !this.adapter) throw new Error('tfjs backend: loadBase and initLora must come first');
    return { kind: 'lora' as const, config: this.config, base: this.base, adapter: this.adapter };
  }

  /** AdamW keeps its moments across steps; a change of betas or clipping starts a fresh one. */
  private optimizerFor(settings: OptimizerSettings): AdamW {
    const key = `${settings.beta1}:${settings.beta2}:${settings.epsilon}:${settings.weightDecay}:${settings.maxGradNorm}`;
    if (!this.optimizer || key !== this.optimizerKey) {
      this.optimizer?.dispose();
      this.optimizer = new AdamW(settings);
      this.optimizerKey = key;
    }
    return this.optimizer;
  }

  async trainStep(batch: TokenBatch, settings: OptimizerSettings): Promise<StepResult> {
    const target = this.target();
    const tensors = toTensors(batch);
    try {
      const { loss, correctTokens, grads } = lossAndGrads(target, tensors);
      const tokenAccuracy = batch.maskedTokens ? correctTokens / batch.maskedTokens : NaN;
      if (!Number.isFinite(loss)) {
        for (const g of Object.values(grads)) g.dispose();
        return { loss, gradNorm: NaN, tokenAccuracy };
      }
      const gradNorm = this.optimizerFor(settings).apply(target.adapter.weights, grads, settings.learningRate);
      return { loss, gradNorm, tokenAccuracy };
    } finally {
      disposeBatch(tensors);
    }
  }

  async evalBatch(batch: TokenBatch): Promise<EvalResult> {
    const target = this.target();
    if (batch.maskedTokens === 0) return { lossSum: 0, maskedTokens: 0, correctTokens: 0 };
    const tensors = toTensors(batch);
    try {
      const counts: TokenCounts = { correct: 0 };
      const loss = tf.tidy(() => maskedLoss(target.config, target.base, tensors.inputs, tensors.targets, tensors.mask, target.adapter, counts));
      const value = loss.dataSync()[0];
      loss.dispose();
      return { lossSum: value * batch.maskedTokens, maskedTokens: batch.maskedTokens, correctTokens: counts.correct };
    } finally {
      disposeBatch(tensors);
    }
  }

  /** Next-token logits after `ids` (one sequence; the LoRA applied once initLora has run): tests and greedy checks. */
  async logits(ids: readonly number[]): Promise<Float32Array> {
    if (!this.config || !this.base) throw new Error('tfjs backend: loadBase must come first');
    const { config, base, adapter } = this;
    const last = tf.tidy(() => forwardLastLogits(config, base, tf.tensor2d([...ids], [1, ids.length], 'int32'), adapter));
    const data = (await last.data()) as Float32Array;
    last.dispose();
    return data;
  }

  async loraTensors(): Promise<LoraTensors> {
    return loraTensorsFromAdapter(this.target().adapter);
  }

  /** The tfjs adapter itself, for the tfjs reference decoder in tests. */
  loraAdapter(): LoraAdapter | undefined {
    return this.adapter;
  }

  async dispose(): Promise<void> {
    this.optimizer?.dispose();
    this.optimizer = undefined;
    if (this.adapter) disposeWeights(this.adapter.weights);
    if (this.base && this.ownsBase) disposeWeights(this.base);
    this.adapter = this.base = undefined;
  }
}
