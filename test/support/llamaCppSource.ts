/**
 * llama.cpp's own source tree, as svc's converter unpacks it (engine/hf/llamaCppTools.ts) from the
 * git bundle node-llama-cpp ships. Tests use what is inside as references nobody here wrote:
 * vocabulary-only GGUFs of real models with their tokenization vectors (models/ggml-vocab-*.gguf,
 * .inp, .out), real chat templates (models/templates/*.jinja), and the gguf-py package (its numpy
 * (de)quantisation is the reference for ours). Nothing of it is committed.
 */
import path from "node:path";
import { llamaCppTools } from "../../engine/hf/llamaCppTools.js";

// Unpacked (or found) when this module loads, since tests name its files at load time.
const { root } = await llamaCppTools();

/** The root of the unpacked llama.cpp tree (it has models/, gguf-py/, src/). */
export function llamaCppSource(): string {
  return root;
}

/** Path of a vocabulary-only GGUF of a real model, e.g. vocabGguf('qwen2') (Qwen2/2.5/3). */
export function vocabGguf(name: "llama-bpe" | "llama-spm" | "qwen2" | string): string {
  return path.join(root, "models", `ggml-vocab-${name}.gguf`);
}

/** The gguf-py package directory, for PYTHONPATH. */
export function ggufPyPath(): string {
  return path.join(root, "gguf-py");
}
