/**
 * LoRA adapter <-> GGUF (what llama.cpp loads with --lora / createContext({lora})).
 *
 * llama.cpp wants `<weight>.lora_a` with ne = [in, r] and `<weight>.lora_b` with ne = [r, out]
 * (so the stored rows are PEFT's lora_A.weight [r, in] and lora_B.weight [out, r]: the seam's
 * layout, written as is), plus adapter.lora.alpha; it applies alpha / r itself, like PEFT. The
 * adapter's general.architecture must equal the base model's. The PEFT twin is engine/gguf/peft.ts.
 */
import { writeFile } from 'node:fs/promises';
import type { LoraTensors } from '../backends/types.js';
import { HF_MODULE_TO_GGUF, loraAdapterFromTensors, loraTensorsFromAdapter, type LoraAdapter, type LoraConfig } from '../lora.js';
import type { Architecture, ModelConfig } from '../model/config.js';
import { f32, str, type GgufFile, type GgufValue } from './format.js';
import { peftAdapterConfig } from './peft.js';
import { metaNumber, readGgufFile } from './reader.js';
import { writeGgufFile } from './writer.js';

export { peftAdapterConfig };

export interface AdapterToSave {
  config: LoraConfig;
  tensors: LoraTensors;
  /** The base model's architecture (llama.cpp refuses an adapter of another one). */
  architecture: Architecture;
  baseModelName: string;
}

export function adapterToGguf(adapter: AdapterToSave): GgufFile {
  const metadata = new Map<string, GgufValue>([
    ['general.architecture', str(adapter.architecture)],
    ['general.type', str('adapter')],
    ['general.name', str(`${adapter.baseModelName}-lora`)],
    ['adapter.type', str('lora')],
    ['adapter.lora.alpha', f32(adapter.config.alpha)],
  ]);
  const names = Object.keys(adapter.tensors).sort(compareTensorNames);
  const tensors = names.map((name) => {
    const { shape, data } = adapter.tensors[name];
    return { name, dims: [shape[1], shape[0]], data };
  });
  return { metadata, tensors };
}

/** Orders blk.2 before blk.10, and lora_a before lora_b, so files are stable and readable. */
function compareTensorNames(a: string, b: string): number {
  const block = (n: string) => Number(/^blk\.(\d+)\./.exec(n)?.[1] ?? -1);
  return block(a) - block(b) || (a < b ? -1 : a > b ? 1 : 0);
}

export async function writeAdapterGguf(path: string, adapter: AdapterToSave): Promise<void> {
  await writeGgufFile(path, adapterToGguf(adapter));
}

/** Writes a tfjs adapter as GGUF (and adapter_config.json when `configPath` is given). */
export async function saveAdapter(
  adapter: LoraAdapter,
  baseModelName: string,
  ggufPath: string,
  configPath?: string,
  architecture: Architecture = 'llama',
): Promise<void> {
  await writeAdapterGguf(ggufPath, { config: adapter.config, tensors: loraTensorsFromAdapter(adapter), architecture, baseModelName });
  if (configPath) await writeFile(configPath, JSON.stringify(peftAdapterConfig(adapter.config, baseModelName), null, 2) + '\n');
}

/** Reads a GGUF LoRA adapter into the seam's layout. */
export async function readAdapterGguf(path: string): Promise<{ config: LoraConfig; tensors: LoraTensors }> {
  const file = await readGgufFile(path);
  const alpha = metaNumber(file, 'adapter.lora.alpha');
  const tensors: LoraTensors = {};
  const modules = new Set<string>();
  let r = 0;
  const ggufToHf = new Map<string, string>(Object.entries(HF_MODULE_TO_GGUF).map(([hf, gguf]) => [gguf, hf]));
  for (const tensor of file.tensors) {
    const match = /^blk\.(\d+)\.(\w+)\.weight\.(lora_a|lora_b)$/.exec(tensor.name);
    const hf = match && ggufToHf.get(match[2]);
    if (!match || !hf) throw new Error(`unexpected tensor ${tensor.name} in LoRA adapter`);
    const [ne0, ne1] = tensor.dims;
    tensors[tensor.name] = { shape: [ne1, ne0], data: tensor.data };
    if (match[3] === 'lora_a') r = ne1;
    modules.add(hf);
  }
  return { config: { r, alpha, targetModules: [...modules] }, tensors };
}

/** Reads an adapter back into tfjs tensors (for the tfjs reference and for tests). */
export async function loadAdapterGguf(path: string, _modelConfig?: ModelConfig): Promise<LoraAdapter> {
  const { config, tensors } = await readAdapterGguf(path);
  return loraAdapterFromTensors(config, tensors);
}
