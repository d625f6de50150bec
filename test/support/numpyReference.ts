/**
 * A third opinion for forward-pass comparisons: numpyForward.py, a textbook float64 numpy forward
 * pass of an F32 llama / qwen2 / qwen3 GGUF (read with llama.cpp's gguf-py), written from the
 * architecture descriptions, not from llama.cpp or the engine. Needs numpy: runs svc's torch venv Python (scripts/setup-system.sh makes it).
 *
 *   numpyLogits(path, tokenIds) → Float32Array[vocab] of raw logits at the last position
 */
import { execFile } from "node:child_process";
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { ggufPyPath } from "./llamaCppSource.js";
import { testModelsDir } from "./testModels.js";
import { torchTestPython } from "./torchStack.js";

const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "numpyForward.py");
let calls = 0;

export async function numpyLogits(model: string, tokenIds: readonly number[]): Promise<Float32Array> {
  const out = path.join(await testModelsDir(), `numpy-logits-${process.pid}-${calls++}.f32`);
  await promisify(execFile)(torchTestPython(), [script, model, tokenIds.join(","), out], {
    env: { ...process.env, PYTHONPATH: ggufPyPath(), PYTHONDONTWRITEBYTECODE: "1" },
    maxBuffer: 1 << 24,
  });
  const bytes = await readFile(out);
  await rm(out, { force: true });
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}
