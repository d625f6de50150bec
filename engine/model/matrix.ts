/** Row-major float32 matrix helpers shared by the GGUF, LoRA and PEFT code. */

/** Transposes a row-major [rows, cols] matrix. */
export function transpose2d(data: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = data[r * cols + c];
  return out;
}
