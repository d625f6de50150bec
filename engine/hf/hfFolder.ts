/**
 * A Hugging Face model folder (config.json, *.safetensors, tokenizer files) checked before anything
 * loads: the architecture svc can train, weights that are whole, a tokenizer llama.cpp's converter
 * can read. Each problem is one sentence naming the file.
 */
import { existsSync } from 'node:fs';
import { open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { isTrainableArchitecture } from '../model/config.js';

/** transformers' model_type -> llama.cpp's general.architecture, for the architectures svc trains. */
const GGUF_ARCHITECTURE: Record<string, string> = {
  llama: 'llama',
  qwen2: 'qwen2',
  qwen3: 'qwen3',
  gemma3: 'gemma3',
  gemma3_text: 'gemma3',
  gemma4: 'gemma4',
  gemma4_text: 'gemma4',
};

export interface HfFolderFacts {
  folder: string;
  /** config.json's model_type, e.g. qwen3. */
  modelType: string;
  /** The GGUF architecture it converts to, e.g. qwen3. */
  architecture: string;
  parameters: number;
  weightFiles: string[];
  weightBytes: number;
  tensorCount: number;
  contextLength: number | null;
}

export class HfFolderError extends Error {
  readonly code = 'invalid_hf_folder';
}

interface SafetensorsEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

/** The tensors of one safetensors file, after checking that the file holds every byte its header promises. */
async function readSafetensorsHeader(file: string): Promise<Record<string, SafetensorsEntry>> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    const prefix = Buffer.alloc(8);
    if (size < 8 || (await handle.read(prefix, 0, 8, 0)).bytesRead < 8) throw new HfFolderError(`${file} is not a safetensors file (${size} bytes)`);
    const headerLength = Number(prefix.readBigUInt64LE(0));
    if (headerLength > 100 * 2 ** 20 || 8 + headerLength > size)
      throw new HfFolderError(`${file} is not a safetensors file or is truncated (its header needs ${headerLength} bytes)`);
    const header = Buffer.alloc(headerLength);
    await handle.read(header, 0, headerLength, 8);
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(header.toString('utf8'));
    } catch {
      throw new HfFolderError(`${file} has an unreadable safetensors header`);
    }
    const tensors = Object.fromEntries(Object.entries(parsed).filter(([name]) => name !== '__metadata__')) as Record<string, SafetensorsEntry>;
    const end = Math.max(0, ...Object.values(tensors).map((t) => t.data_offsets?.[1] ?? 0));
    if (8 + headerLength + end > size) {
      throw new HfFolderError(`${file} is truncated: its tensors need ${8 + headerLength + end} bytes, the file has ${size}`);
    }
    return tensors;
  } finally {
    await handle.close();
  }
}

export async function inspectHfFolder(folder: string): Promise<HfFolderFacts> {
  const dir = path.resolve(folder);
  const configFile = path.join(dir, 'config.json');
  if (!existsSync(configFile)) throw new HfFolderError(`${dir} has no config.json: not a Hugging Face model folder`);
  let config: Record<string, unknown>;
  try {
    config = JSON.parse(await readFile(configFile, 'utf8'));
  } catch (err) {
    throw new HfFolderError(`${configFile} is not valid JSON: ${(err as Error).message}`);
  }
  const modelType = String(config.model_type ?? '');
  const architecture = GGUF_ARCHITECTURE[modelType];
  if (!architecture || !isTrainableArchitecture(architecture)) {
    throw new HfFolderError(
      `${dir}: model_type "${modelType || '(none)'}" is not an architecture svc trains (it trains ${Object.keys(GGUF_ARCHITECTURE).join(', ')})`,
    );
  }
  const names = await readdir(dir);
  const weightFiles = names.filter((n) => n.endsWith('.safetensors')).sort();
  if (weightFiles.length === 0) {
    const other = names.find((n) => /\.(bin|pt|pth|ckpt)$/.test(n));
    throw new HfFolderError(
      `${dir} has no *.safetensors weights${other ? ` (${other} is a pickle checkpoint, which svc does not load: save the model with safe_serialization)` : ''}`,
    );
  }
  if (!names.includes('tokenizer.json') && !names.includes('tokenizer.model')) {
    throw new HfFolderError(`${dir} has no tokenizer (tokenizer.json or tokenizer.model)`);
  }
  let parameters = 0;
  let tensorCount = 0;
  let weightBytes = 0;
  for (const file of weightFiles) {
    const full = path.join(dir, file);
    const tensors = await readSafetensorsHeader(full);
    for (const t of Object.values(tensors)) parameters += t.shape.reduce((a, b) => a * b, 1);
    tensorCount += Object.keys(tensors).length;
    weightBytes += (await stat(full)).size;
  }
  const text = (config.text_config ?? config) as Record<string, unknown>;
  const context = Number(text.max_position_embeddings ?? config.max_position_embeddings);
  return { folder: dir, modelType, architecture, parameters, weightFiles, weightBytes, tensorCount, contextLength: Number.isFinite(context) ? context : null };
}
