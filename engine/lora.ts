/**
 * LoRA: a low-rank update W + (alpha / r) · A · B added to chosen linear projections.
 *
 * Names follow two conventions at once: target modules are given and stored with Hugging Face /
 * PEFT names (q_proj, v_proj...) because that is what users and adapter_config.json know, and
 * tensors are keyed by their GGUF names (`blk.0.attn_q.weight.lora_a`) because that is what
 * llama.cpp loads. A is [in, r] and B is [r, out] in tfjs; B starts at zero so the adapted model
 * equals the base model at step 0.
 */
import { tf } from './backend.js';
import type { ModelConfig } from './model/config.js';
import { linearShape, type BlockLinear } from './model/weights.js';
import { SeededRandom } from './random.js';
import { transpose2d } from './model/matrix.js';
import type { LoraSpec, LoraTensors } from './backends/types.js';

export const HF_MODULE_TO_GGUF: Record<string, BlockLinear> = {
  q_proj: 'attn_q',
  k_proj: 'attn_k',
  v_proj: 'attn_v',
  o_proj: 'attn_output',
  gate_proj: 'ffn_gate',
  up_proj: 'ffn_up',
  down_proj: 'ffn_down',
};

/**
 * Every attention and MLP projection, as QLoRA-style recipes adapt by default: it learns more per
 * step than attention alone for little extra memory. `lora.targetModules` narrows it.
 */
export const DEFAULT_TARGET_MODULES = Object.keys(HF_MODULE_TO_GGUF);

export interface LoraConfig {
  r: number;
  alpha: number;
  /** HF module names (q_proj...). Short forms q, k, v, o, gate, up, down are accepted too. */
  targetModules: string[];
}

export type LoraWeights = Record<string, tf.Tensor>;

export interface LoraAdapter {
  config: LoraConfig;
  /** Multiplier applied to A·B: alpha / r, the PEFT convention (llama.cpp does the same). */
  scaling: number;
  weights: LoraWeights;
}

/** Turns user-given module names into canonical HF names; throws on unknown ones. */
export function normalizeTargetModules(modules: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of modules) {
    const name = raw in HF_MODULE_TO_GGUF ? raw : `${raw}_proj`;
    if (!(name in HF_MODULE_TO_GGUF)) {
      throw new Error(`unknown LoRA target module "${raw}" (expected one of ${Object.keys(HF_MODULE_TO_GGUF).join(', ')})`);
    }
    if (!out.includes(name)) out.push(name);
  }
  if (out.length === 0) throw new Error('lora.targetModules must not be empty');
  return out;
}

export function validateLoraConfig(config: LoraConfig): LoraConfig {
  if (!Number.isInteger(config.r) || config.r < 1) throw new Error(`lora.r must be a positive integer, got ${config.r}`);
  if (!(config.alpha > 0)) throw new Error(`lora.alpha must be positive, got ${config.alpha}`);
  return { r: config.r, alpha: config.alpha, targetModules: normalizeTargetModules(config.targetModules) };
}

export function loraTensorName(block: number, linear: BlockLinear, part: 'lora_a' | 'lora_b'): string {
  return `blk.${block}.${linear}.weight.${part}`;
}

/** The seam's description of an adapter: GGUF names of the adapted projections. */
export function loraSpec(config: LoraConfig): LoraSpec {
  return { r: config.r, alpha: config.alpha, targets: config.targetModules.map((m) => HF_MODULE_TO_GGUF[m]) };
}

/**
 * Initial LoRA matrices in the seam's (PEFT) layout: A as PEFT does it (kaiming-uniform, bound
 * 1/sqrt(in)) from our seeded generator, B zero. The numbers depend only on the seed, so every
 * compute backend starts from the same adapter.
 */
/**
 * The [out, in] shape of each adaptable projection, keyed `blk.N.<proj>` (GGUF names), as the
 * loaded model has them: what the torch backend reports for architectures whose layers differ
 * (Gemma 4's per-layer head widths, layers that share another's keys and values).
 */
export type ProjectionShapes = Readonly<Record<string, readonly [number, number]>>;

export function initLoraTensors(
  modelConfig: ModelConfig,
  loraConfig: LoraConfig,
  seed: number,
  shapes?: ProjectionShapes,
): { config: LoraConfig; tensors: LoraTensors } {
  const config = validateLoraConfig(loraConfig);
  const random = new SeededRandom(seed);
  const tensors: LoraTensors = {};
  for (let block = 0; block < modelConfig.blockCount; block++) {
    for (const module of config.targetModules) {
      const linear = HF_MODULE_TO_GGUF[module];
      const known = shapes ? shapes[`blk.${block}.${linear}`] : undefined;
      if (shapes && !known) continue; // this layer has no such projection
      const [inDim, outDim] = known ? [known[1], known[0]] : linearShape(modelConfig, linear);
      const bound = 1 / Math.sqrt(inDim);
      // Drawn in [in, r] order (the order of earlier releases, so seeds keep their meaning).
      const a = new Float32Array(inDim * config.r);
      for (let i = 0; i < a.length; i++) a[i] = (random.next() * 2 - 1) * bound;
      tensors[loraTensorName(block, linear, 'lora_a')] = { shape: [config.r, inDim], data: transpose2d(a, inDim, config.r) };
      tensors[loraTensorName(block, linear, 'lora_b')] = { shape: [outDim, config.r], data: new Float32Array(outDim * config.r) };
    }
  }
  return { config, tensors };
}

/** Seam layout (A [r, in], B [out, r]) -> tfjs adapter (A [in, r], B [r, out]). */
export function loraAdapterFromTensors(config: LoraConfig, tensors: LoraTensors): LoraAdapter {
  const weights: LoraWeights = {};
  for (const [name, { shape, data }] of Object.entries(tensors)) weights[name] = tf.tensor(transpose2d(data, shape[0], shape[1]), [shape[1], shape[0]]);
  return { config, scaling: config.alpha / config.r, weights };
}

/** tfjs adapter -> seam layout. */
export function loraTensorsFromAdapter(adapter: LoraAdapter): LoraTensors {
  const tensors: LoraTensors = {};
  for (const [name, tensor] of Object.entries(adapter.weights)) {
    const [rows, cols] = tensor.shape as [number, number];
    tensors[name] = { shape: [cols, rows], data: transpose2d(tensor.dataSync() as Float32Array, rows, cols) };
  }
  return tensors;
}

export function initLora(modelConfig: ModelConfig, loraConfig: LoraConfig, seed: number): LoraAdapter {
  const { config, tensors } = initLoraTensors(modelConfig, loraConfig, seed);
  return loraAdapterFromTensors(config, tensors);
}
