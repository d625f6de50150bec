/**
 * Hugging Face's row order for llama q/k projections, written from convert_hf_to_gguf.py's
 * permute (HF rows -> GGUF rows): reshape(heads, 2, half, cols).swapaxes(1, 2). Tests use it as
 * an implementation independent of the engine's (engine/gguf/peft.ts goes the other way).
 */
import type { Matrix } from "../../engine/backends/types.js";

export function hfToGgufRows(matrix: Matrix, heads: number): Float32Array {
  const [rows, cols] = matrix.shape;
  const half = rows / heads / 2;
  const out = new Float32Array(matrix.data.length);
  let to = 0;
  for (let h = 0; h < heads; h++) {
    for (let i = 0; i < half; i++) {
      for (let s = 0; s < 2; s++) {
        const from = ((h * 2 + s) * half + i) * cols; // index of [h][s][i] in the HF layout
        out.set(matrix.data.subarray(from, from + cols), to);
        to += cols;
      }
    }
  }
  return out;
}
