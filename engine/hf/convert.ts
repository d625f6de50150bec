/**
 * A Hugging Face folder as a GGUF, made once with llama.cpp's own converter (convert_hf_to_gguf.py,
 * run in the torch backend's Python): what llama.cpp serves and what the trainer reads, tokenizer
 * and chat template included. Written beside its final name and renamed when whole, so a failed or
 * interrupted conversion leaves nothing behind.
 */
import { spawn } from 'node:child_process';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { detectTorch } from '../backends/torch/detect.js';
import type { HfFolderFacts } from './hfFolder.js';
import { llamaCppTools } from './llamaCppTools.js';

export interface ConvertProgress {
  /** Tensors written so far, of `total`. */
  done: number;
  total: number;
  tensor: string;
}

export interface ConvertOptions {
  /** The GGUF's weight type: bf16 (default, a checkpoint's own precision), f16 or f32. */
  outType?: 'bf16' | 'f16' | 'f32';
  python?: string;
  onProgress?: (progress: ConvertProgress) => void;
  log?: (line: string) => void;
}

/** One converter log line per tensor: "INFO:hf-to-gguf:blk.0.attn_q.weight, torch.bfloat16 --> BF16, shape = {64, 64}". */
const TENSOR_LINE = /^INFO:hf-to-gguf:([\w.]+),\s+torch\.\w+ --> \w+, shape = /;

export async function convertHfFolder(facts: HfFolderFacts, outFile: string, options: ConvertOptions = {}): Promise<void> {
  const python = options.python ?? (await pythonForConversion());
  const tools = await llamaCppTools();
  await mkdir(path.dirname(outFile), { recursive: true });
  const partial = `${outFile}.${process.pid}.partial`;
  const args = [tools.convertScript, facts.folder, '--outfile', partial, '--outtype', options.outType ?? 'bf16'];
  const env = { ...process.env, PYTHONPATH: [tools.ggufPy, process.env.PYTHONPATH].filter(Boolean).join(path.delimiter), PYTHONDONTWRITEBYTECODE: '1' };
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(python, args, { env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
      let done = 0;
      let tail: string[] = [];
      let buffered = '';
      const onData = (chunk: Buffer) => {
        buffered += chunk.toString('utf8');
        const lines = buffered.split(/\r?\n|\r/);
        buffered = lines.pop() ?? '';
        for (const line of lines) {
          if (!line.trim()) continue;
          tail = [...tail.slice(-11), line];
          options.log?.(line);
          const match = TENSOR_LINE.exec(line);
          if (match) options.onProgress?.({ done: ++done, total: facts.tensorCount, tensor: match[1] });
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('error', (err) => reject(new Error(`cannot run ${python}: ${err.message}`)));
      child.on('exit', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(`llama.cpp's converter failed on ${facts.folder} (${signal ?? `exit ${code}`}):\n${tail.join('\n')}`));
      });
    });
    await rename(partial, outFile);
  } finally {
    await rm(partial, { force: true });
  }
}

async function pythonForConversion(): Promise<string> {
  const found = await detectTorch();
  if (!found.ok) throw new Error(`converting a Hugging Face model runs llama.cpp's converter in the torch backend's Python: ${found.reason}`);
  return found.python;
}
