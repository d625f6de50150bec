/**
 * Random-weight Hugging Face models of real Gemma architectures, and their GGUFs made by
 * llama.cpp's own converter, so the torch backend and llama.cpp can be checked offline on files
 * shaped like the ones users bring. The Python half (hfTestModels.py, beside this file) runs in
 * svc's torch venv (transformers, torch, gguf, sentencepiece).
 *
 *   buildHfTestModel({arch, dtype, seed})       → folder as transformers' save_pretrained writes
 *                                                 it: config.json, generation_config.json,
 *                                                 model.safetensors, tokenizer.json,
 *                                                 tokenizer_config.json, chat_template.jinja
 *                                                 (gemma3 also tokenizer.model, as real Gemma 3
 *                                                 repositories ship it)
 *   buildHfTestGguf({arch, dtype, seed, outtype}) → that folder converted by convert_hf_to_gguf.py
 *                                                 from node-llama-cpp's llama.cpp source
 *                                                 (outtype f32 default | bf16 | f16 | q8_0)
 *   transformersLogits(folder, tokenIds, {gguf, completeConfig})
 *                                               → transformers' float32 next-token logits (eager
 *                                                 attention) from the folder, or from a GGUF
 *                                                 through transformers' own GGUF loader;
 *                                                 completeConfig first fills in what that loader
 *                                                 does not read (hfTestModels.py
 *                                                 completed_gguf_config, load_skipped_buffers)
 *   hfTestPython()                               → the Python used (SVC_PYTHON, else svc's venv)
 *
 * Shapes (see hfTestModels.py): hidden 64, vocabulary 262144 (Gemma 4's, from llama.cpp's
 * models/ggml-vocab-gemma-4.gguf, for both: no Gemma 3 tokenizer is on hand offline, and Gemma 3
 * and 4 share the 262K SentencePiece-derived vocabulary layout).
 *   gemma3  Gemma3ForCausalLM: 6 layers (5 sliding + 1 global, the 5:1 pattern llama.cpp assumes
 *           for gemma3 files, which carry no per-layer pattern), 2 heads, 1 KV head, head_dim 32,
 *           query_pre_attn_scalar 32, sliding window 8, tied output.
 *   gemma4  Gemma4ForCausalLM (E2B's text part, shrunk): 4 layers sliding/global alternating,
 *           head_dim 32 (sliding) / 64 (global, proportional RoPE over a quarter), per-layer
 *           embeddings of 16, the last 2 layers reusing KV (num_kv_shared_layers 2) with
 *           double-wide MLPs, final logit softcap 30, sliding window 8, tied output.
 *
 * Each model is built once per options per process, in a temp dir removed at exit (SVC_KEEP_TMP=1
 * keeps it). Nothing is downloaded; nothing is committed.
 */
import { execFile } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createTempDir } from './tmp.js';
import { llamaCppSource, ggufPyPath, vocabGguf } from './llamaCppSource.js';

export type HfTestArch = 'gemma3' | 'gemma4';

export interface HfTestModelOptions {
  arch: HfTestArch;
  /** The safetensors' dtype (default float32, so comparisons measure the engines, not rounding). */
  dtype?: 'float32' | 'bfloat16';
  seed?: number;
}

export interface HfTestGgufOptions extends HfTestModelOptions {
  /** convert_hf_to_gguf.py --outtype (default f32). */
  outtype?: 'f32' | 'bf16' | 'f16' | 'q8_0';
}

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'hfTestModels.py');

/** SVC_PYTHON when set, else svc's torch venv (SVC_TORCH_VENV or ~/.cache/svc/torch-venv). */
export function hfTestPython(): string {
  if (process.env.SVC_PYTHON) return process.env.SVC_PYTHON;
  const venv = process.env.SVC_TORCH_VENV
    ? path.resolve(process.env.SVC_TORCH_VENV)
    : path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'svc', 'torch-venv');
  return process.platform === 'win32' ? path.join(venv, 'Scripts', 'python.exe') : path.join(venv, 'bin', 'python');
}

function runPython(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(hfTestPython(), args, { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${path.basename(args[0])} ${args[1]} failed: ${err.message}\n${stderr.slice(-4000)}`));
      else resolve(stdout);
    });
  });
}

function resolved(options: HfTestModelOptions): Required<HfTestModelOptions> {
  return { arch: options.arch, dtype: options.dtype ?? 'float32', seed: options.seed ?? 1 };
}

const folders = new Map<string, Promise<string>>();
const ggufs = new Map<string, Promise<string>>();

/** The Hugging Face folder of a random-weight model (built once per options per process). */
export function buildHfTestModel(options: HfTestModelOptions): Promise<string> {
  const o = resolved(options);
  const key = JSON.stringify(o);
  let folder = folders.get(key);
  if (!folder) {
    folder = (async () => {
      const tmp = await createTempDir(`hf-${o.arch}`);
      const out = path.join(tmp.path, 'model');
      await runPython([script, 'build', '--arch', o.arch, '--vocab-gguf', vocabGguf('gemma-4'), '--out', out, '--dtype', o.dtype, '--seed', String(o.seed)]);
      return out;
    })();
    folders.set(key, folder);
    folder.catch(() => folders.delete(key));
  }
  return folder;
}

/** The model of buildHfTestModel converted to GGUF by llama.cpp's convert_hf_to_gguf.py. */
export function buildHfTestGguf(options: HfTestGgufOptions): Promise<string> {
  const o = { ...resolved(options), outtype: options.outtype ?? 'f32' };
  const key = JSON.stringify(o);
  let file = ggufs.get(key);
  if (!file) {
    file = (async () => {
      const folder = await buildHfTestModel(o);
      const tmp = await createTempDir(`gguf-${o.arch}`);
      const out = path.join(tmp.path, `${o.arch}-${o.outtype}.gguf`);
      // The converter must use the gguf-py of its own tree: it writes keys (gemma4's per-layer
      // and shared-KV metadata) that an older installed gguf package does not know.
      await runPython([path.join(llamaCppSource(), 'convert_hf_to_gguf.py'), folder, '--outtype', o.outtype, '--outfile', out], { PYTHONPATH: ggufPyPath() });
      return out;
    })();
    ggufs.set(key, file);
    file.catch(() => ggufs.delete(key));
  }
  return file;
}

/**
 * transformers' next-token logits (float32, eager attention) after `tokenIds`: from the HF folder,
 * or with `gguf` from that file through AutoModelForCausalLM.from_pretrained(dir, gguf_file=...).
 * transformers 5.18 alone builds a different Gemma 3 from a converted file (query_pre_attn_scalar,
 * layer pattern, local RoPE base are not read) and refuses a Gemma 4 E2B/E4B-shaped one (its
 * per-layer feed_forward_length is a list): `completeConfig` supplies those from llama.cpp's keys.
 */
export async function transformersLogits(folder: string, tokenIds: readonly number[], options: { gguf?: string; completeConfig?: boolean } = {}): Promise<Float64Array> {
  const args = options.gguf
    ? [script, 'logits', '--model', path.dirname(options.gguf), '--gguf', path.basename(options.gguf), ...(options.completeConfig ? ['--complete-config'] : [])]
    : [script, 'logits', '--model', folder];
  const stdout = await runPython([...args, '--tokens', tokenIds.join(',')]);
  return Float64Array.from((JSON.parse(stdout) as { logits: number[] }).logits);
}
