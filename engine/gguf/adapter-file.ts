/**
 * LoRA adapter <-> GGUF (what llama.cpp loads with --lora / createContext({lora})) and the PEFT
 * `adapter_config.json` that lets the same numbers be used from PyTorch/PEFT or vLLM.
 *
 * llama.cpp wants `<weight>.lora_a` with ne = [in, r] and `<weight>.lora_b` with ne = [r, out]
 * (so the stored rows are PEFT's lora_A.weight [r, in] and lora_B.weight [out, r]), plus
 * adapter.lora.alpha; it applies alpha / r itself, like PEFT.
 */
import { writeFile } from 'node:fs/promises';
import { HF_MODULE_TO_GGUF, type LoraAdapter, type LoraWeights } from '../lora.js';
import type { ModelConfig } from '../model/config.js';
import { linearShape } from '../model/weights.js';
import { f32, str, type GgufFile, type GgufValue } from './format.js';
import { metaNumber, readGgufFile } from './reader.js';
import { fromGgufTensor, toGgufTensor } from './model-file.js';
import { writeGgufFile } from './writer.js';

export function adapterToGguf(adapter: LoraAdapter, baseModelName: string): GgufFile {
  const metadata = new Map<string, GgufValue>([
    ['general.architecture', str('llama')],
    ['general.type', str('adapter')],
    ['general.name', str(`${baseModelName}-lora`)],
    ['adapter.type', str('lora')],
    ['adapter.lora.alpha', f32(adapter.config.alpha)],
  ]);
  const names = Object.keys(adapter.weights).sort(compareTensorNames);
  const tensors = names.map((name) => toGgufTensor(name, adapter.weights[name], true));
  return { metadata, tensors };
}

/** Orders blk.2 before blk.10, and lora_a before lora_b, so files are stable and readable. */
function compareTensorNames(a: string, b: string): number {
  const block = (n: string) => Number(/^blk\.(\d+)\./.exec(n)?.[1] ?? -1);
  return block(a) - block(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** The PEFT adapter_config.json fields vLLM and PEFT read. */
export function peftAdapterConfig(adapter: LoraAdapter, baseModelName: string): Record<string, unknown> {
  return {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    base_model_name_or_path: baseModelName,
    r: adapter.config.r,
    lora_alpha: adapter.config.alpha,
    target_modules: adapter.config.targetModules,
    lora_dropout: 0,
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
  };
}

/** Writes `<path>` (GGUF) and returns it; adapter_config.json goes to `configPath` when given. */
export async function saveAdapter(adapter: LoraAdapter, baseModelName: string, ggufPath: string, configPath?: string): Promise<void> {
  await writeGgufFile(ggufPath, adapterToGguf(adapter, baseModelName));
  if (configPath) await writeFile(configPath, JSON.stringify(peftAdapterConfig(adapter, baseModelName), null, 2) + '\n');
}

/** Reads an adapter we wrote back into tfjs tensors (for the tfjs reference and for tests). */
export async function loadAdapterGguf(path: string, modelConfig: ModelConfig): Promise<LoraAdapter> {
  const file = await readGgufFile(path);
  const alpha = metaNumber(file, 'adapter.lora.alpha');
  const weights: LoraWeights = {};
  const modules = new Set<string>();
  let r = 0;
  const ggufToHf = new Map<string, string>(Object.entries(HF_MODULE_TO_GGUF).map(([hf, gguf]) => [gguf, hf]));
  for (const tensor of file.tensors) {
    const match = /^blk\.(\d+)\.(\w+)\.weight\.(lora_a|lora_b)$/.exec(tensor.name);
    const hf = match && ggufToHf.get(match[2]);
    if (!match || !hf) throw new Error(`unexpected tensor ${tensor.name} in LoRA adapter`);
    const [inDim, outDim] = linearShape(modelConfig, HF_MODULE_TO_GGUF[hf]);
    r = match[3] === 'lora_a' ? tensor.dims[1] : tensor.dims[0];
    const shape = match[3] === 'lora_a' ? [inDim, r] : [r, outDim];
    weights[tensor.name] = fromGgufTensor(tensor, shape, true);
    modules.add(hf);
  }
  const config = { r, alpha, targetModules: [...modules] };
  return { config, scaling: alpha / r, weights };
}
