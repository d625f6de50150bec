/**
 * llama.cpp's own Python tools (convert_hf_to_gguf.py and its gguf-py), unpacked from the git
 * bundle of llama.cpp's source that node-llama-cpp ships, so svc converts Hugging Face folders
 * with the converter llama.cpp itself is tested against, at the version it serves with.
 * Unpacked once per bundle into svc's cache (a private name renamed into place, so two processes
 * never see half a tree). Needs `git`.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';

const run = promisify(execFile);

/**
 * The bundle of the node-llama-cpp that svc itself imports: where Node resolves it from here, which in
 * a user's project is usually the project's own node_modules (npm hoists it), not one inside svc's.
 */
export function llamaCppBundle(): string {
  let dir = path.dirname(createRequire(import.meta.url).resolve('node-llama-cpp'));
  while (!existsSync(path.join(dir, 'llama', 'gitRelease.bundle')) && path.dirname(dir) !== dir && path.basename(dir) !== 'node-llama-cpp')
    dir = path.dirname(dir);
  return path.join(dir, 'llama', 'gitRelease.bundle');
}

async function fileId(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex').slice(0, 12);
}

export interface LlamaCppTools {
  root: string;
  convertScript: string;
  ggufPy: string;
}

/** The unpacked tree under `cacheDir` (default: the OS cache folder's svc/). */
export async function llamaCppTools(cacheDir = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'svc')): Promise<LlamaCppTools> {
  const bundle = llamaCppBundle();
  if (!existsSync(bundle)) throw new Error(`llama.cpp's source bundle is missing at ${bundle}; reinstall svc's dependencies (npm ci)`);
  const root = path.join(cacheDir, `llama.cpp-${await fileId(bundle)}`);
  const tools = { root, convertScript: path.join(root, 'convert_hf_to_gguf.py'), ggufPy: path.join(root, 'gguf-py') };
  if (existsSync(tools.convertScript)) return tools;
  await mkdir(cacheDir, { recursive: true });
  const partial = `${root}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  try {
    await run('git', ['clone', '--quiet', bundle, partial]);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new Error(
      code === 'ENOENT'
        ? "converting a Hugging Face model needs git (to unpack llama.cpp's converter from node-llama-cpp); install git"
        : `cannot unpack llama.cpp's source: ${(err as Error).message}`,
    );
  }
  try {
    await rename(partial, root);
  } catch (err) {
    await rm(partial, { recursive: true, force: true });
    if (!existsSync(tools.convertScript)) throw err;
  }
  return tools;
}
