/**
 * llama.cpp's own source tree, unpacked from the git bundle node-llama-cpp ships
 * (node_modules/node-llama-cpp/llama/gitRelease.bundle). Tests use what is inside as references
 * nobody here wrote: vocabulary-only GGUFs of real models with their tokenization vectors
 * (models/ggml-vocab-*.gguf, .inp, .out), real chat templates (models/templates/*.jinja), and the
 * gguf-py package (its numpy (de)quantisation is the reference for ours).
 *
 * Unpacked once per bundle into the OS temp dir and reused by later runs; nothing is committed.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { llamaCppBundle } from "../../engine/hf/llamaCppTools.js";

let cached: string | undefined;

/**
 * The root of the unpacked llama.cpp tree (it has models/, gguf-py/, src/): the bundle svc's converter unpacks
 * (engine/hf/llamaCppTools.ts), unpacked here synchronously since tests name its files at load time.
 */
export function llamaCppSource(): string {
  if (cached) return cached;
  const bundle = llamaCppBundle();
  if (!existsSync(bundle)) throw new Error(`llama.cpp source bundle not found at ${bundle}; run npm ci`);
  const id = createHash("sha256").update(readFileSync(bundle)).digest("hex").slice(0, 12);
  const dir = path.join(tmpdir(), `svc-llama-cpp-src-${id}`);
  if (!existsSync(path.join(dir, "models"))) {
    // Clone into a private name and rename, so two test processes never see a half-made tree.
    const partial = `${dir}.${process.pid}.partial`;
    rmSync(partial, { recursive: true, force: true });
    execFileSync("git", ["clone", "--quiet", bundle, partial], { stdio: ["ignore", "ignore", "pipe"] });
    try {
      renameSync(partial, dir);
    } catch (err) {
      if (!existsSync(path.join(dir, "models"))) throw err;
      rmSync(partial, { recursive: true, force: true });
    }
  }
  cached = dir;
  return dir;
}

/** Path of a vocabulary-only GGUF of a real model, e.g. vocabGguf('qwen2') (Qwen2/2.5/3). */
export function vocabGguf(name: "llama-bpe" | "llama-spm" | "qwen2" | string): string {
  return path.join(llamaCppSource(), "models", `ggml-vocab-${name}.gguf`);
}

/** The gguf-py package directory, for PYTHONPATH. */
export function ggufPyPath(): string {
  return path.join(llamaCppSource(), "gguf-py");
}
