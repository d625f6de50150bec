/**
 * RoPE and causal self-attention as one custom-gradient op, run as per-head plain 2-D products.
 *
 * Why one op: tfjs-wasm multiplies untransposed 2-D matrices through XNNPACK but batched or
 * transposed ones through a naive loop, and its Slice (so Unpack, Split) re-reads the whole input
 * for every slice it takes: cutting [B·H, T, hd] into heads costs more than the attention
 * products themselves. Here q, k and v are read
 * once and rotated by RoPE in place, every head is cut out in plain JavaScript (kᵀ written
 * transposed), every product is an untransposed 2-D one, and the backward pass is written out:
 *   S = s·q kᵀ + mask, P = softmax(S), O = P v
 *   dP = dO vᵀ,  dS = P ⊙ (dP − rowsum(dP ⊙ P)),  dq = s·dS k,  dk = dSᵀ (s·q),  dv = Pᵀ dO
 * with the transposed products taken as their transposes (dkᵀ = (s·q)ᵀ dS, dvᵀ = dOᵀ P) and RoPE's
 * backward the rotation by −θ. Grouped-query heads share their key/value head, whose gradient
 * sums over the group (as ggml's broadcast does in the forward pass).
 */
import { tf } from '../backend.js';
import { peek, scratch } from './tensor-data.js';

export interface AttentionShape {
  batch: number;
  length: number;
  heads: number;
  kvHeads: number;
  headDim: number;
}

/**
 * RoPE for one length: pair i of position t turns by the angle at [t · half + i]; the pair's two
 * members are columns first[i] and second[i] of a head ((2i, 2i+1) for 'normal', (i, i + hd/2) for 'neox').
 */
export interface RopeTables {
  cos: Float32Array;
  sin: Float32Array;
  first: Int32Array;
  second: Int32Array;
}

/** [B·T, heads·hd] token rows: rotates every head by RoPE (by −θ when `inverse`) and scales, in place. */
function rotate(x: Float32Array, heads: number, hd: number, length: number, rope: RopeTables, scale: number, inverse: boolean): void {
  const { cos, sin, first, second } = rope;
  const half = hd >> 1;
  const width = heads * hd;
  const sign = inverse ? -scale : scale;
  const rows = x.length / width;
  for (let row = 0; row < rows; row++) {
    const angle = (row % length) * half;
    for (let h = 0; h < heads; h++) {
      const base = row * width + h * hd;
      for (let i = 0; i < half; i++) {
        const a = base + first[i];
        const b = base + second[i];
        const c = cos[angle + i] * scale;
        const s = sin[angle + i] * sign;
        const xa = x[a];
        const xb = x[b];
        x[a] = xa * c - xb * s;
        x[b] = xb * c + xa * s;
      }
    }
  }
}

/** Copies head columns col..col+hd of rows row0..row0+T of a [rows, width] matrix into out as [T, hd]. */
function readHead(src: Float32Array, width: number, row0: number, col: number, T: number, hd: number, out: Float32Array): Float32Array {
  for (let t = 0; t < T; t++) {
    const from = (row0 + t) * width + col;
    const to = t * hd;
    for (let d = 0; d < hd; d++) out[to + d] = src[from + d];
  }
  return out;
}

/** The same head as [hd, T]. */
function readHeadTransposed(src: Float32Array, width: number, row0: number, col: number, T: number, hd: number, out: Float32Array): Float32Array {
  for (let t = 0; t < T; t++) {
    const from = (row0 + t) * width + col;
    for (let d = 0; d < hd; d++) out[d * T + t] = src[from + d];
  }
  return out;
}

/** Adds g [T, hd] into the head's place in dst. */
function addHead(g: Float32Array, dst: Float32Array, width: number, row0: number, col: number, T: number, hd: number): void {
  for (let t = 0; t < T; t++) {
    const to = (row0 + t) * width + col;
    const from = t * hd;
    for (let d = 0; d < hd; d++) dst[to + d] += g[from + d];
  }
}

/** Adds g [hd, T] (a head's transpose) into the head's place in dst. */
function addHeadTransposed(g: Float32Array, dst: Float32Array, width: number, row0: number, col: number, T: number, hd: number): void {
  for (let t = 0; t < T; t++) {
    const to = (row0 + t) * width + col;
    for (let d = 0; d < hd; d++) dst[to + d] += g[d * T + t];
  }
}

/**
 * softmax(s · rope(q) · rope(k)ᵀ + mask) · v per head. q [B·T, H·hd], k and v [B·T, Hkv·hd]
 * (token rows, heads side by side, as the projections give them) -> [B·T, H·hd], in that layout,
 * so no transposes are needed around it. `mask` is [T, T]: 0 where a position may attend, -1e9 where not.
 */
export function ropeCausalAttention(
  q: tf.Tensor2D,
  k: tf.Tensor2D,
  v: tf.Tensor2D,
  shape: AttentionShape,
  rope: RopeTables,
  mask: tf.Tensor2D,
  scale: number,
): tf.Tensor2D {
  const { batch, length: T, heads, kvHeads, headDim: hd } = shape;
  const group = heads / kvHeads;
  const qWidth = heads * hd;
  const kvWidth = kvHeads * hd;
  const upload = (data: Float32Array, rows: number, cols: number) => tf.tensor2d(data, [rows, cols]);
  const op = tf.customGrad(((qIn: tf.Tensor, kIn: tf.Tensor, vIn: tf.Tensor, save: tf.GradSaveFunc) => {
    // Copies (dataSync) that this op owns: rotated in place, and kept for the backward pass.
    const qs = qIn.dataSync() as Float32Array;
    const kr = kIn.dataSync() as Float32Array;
    const vd = vIn.dataSync() as Float32Array;
    rotate(qs, heads, hd, T, rope, scale, false);
    rotate(kr, kvHeads, hd, T, rope, 1, false);
    const context = new Float32Array(batch * T * qWidth);
    const [qBuf, kBuf, vBuf] = [scratch(T * hd), scratch(T * hd), scratch(T * hd)];
    const probs: tf.Tensor2D[] = [];
    for (let b = 0; b < batch; b++) {
      for (let g = 0; g < kvHeads; g++) {
        tf.tidy(() => {
          const kt = upload(readHeadTransposed(kr, kvWidth, b * T, g * hd, T, hd, kBuf()), hd, T);
          const vh = upload(readHead(vd, kvWidth, b * T, g * hd, T, hd, vBuf()), T, hd);
          for (let h = g * group; h < (g + 1) * group; h++) {
            const qh = upload(readHead(qs, qWidth, b * T, h * hd, T, hd, qBuf()), T, hd);
            const p = tf.softmax(tf.matMul(qh, kt).add(mask)) as tf.Tensor2D;
            addHead(peek(tf.matMul(p, vh)), context, qWidth, b * T, h * hd, T, hd);
            probs[b * heads + h] = tf.keep(p);
          }
        });
      }
    }
    save(probs);
    for (const p of probs) p.dispose(); // save() holds its own references while a gradient is being recorded

    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const dyd = dy.dataSync() as Float32Array;
      const dqs = new Float32Array(qs.length);
      const dkr = new Float32Array(kr.length);
      const dv = new Float32Array(vd.length);
      const [kBuf2, vBuf2, oBuf, otBuf, qtBuf, sBuf] = [scratch(T * hd), scratch(T * hd), scratch(T * hd), scratch(T * hd), scratch(T * hd), scratch(T * T)];
      for (let b = 0; b < batch; b++) {
        for (let g = 0; g < kvHeads; g++) {
          tf.tidy(() => {
            const kh = upload(readHead(kr, kvWidth, b * T, g * hd, T, hd, kBuf2()), T, hd);
            const vt = upload(readHeadTransposed(vd, kvWidth, b * T, g * hd, T, hd, vBuf2()), hd, T);
            for (let h = g * group; h < (g + 1) * group; h++) {
              const p = saved[b * heads + h] as tf.Tensor2D;
              const dO = upload(readHead(dyd, qWidth, b * T, h * hd, T, hd, oBuf()), T, hd);
              const dOt = upload(readHeadTransposed(dyd, qWidth, b * T, h * hd, T, hd, otBuf()), hd, T);
              const qt = upload(readHeadTransposed(qs, qWidth, b * T, h * hd, T, hd, qtBuf()), hd, T);
              const dP = tf.matMul(dO, vt);
              const dS = upload(softmaxBackward(peek(p), peek(dP), T, sBuf()), T, T);
              addHead(peek(tf.matMul(dS, kh)), dqs, qWidth, b * T, h * hd, T, hd);
              addHeadTransposed(peek(tf.matMul(qt, dS)), dkr, kvWidth, b * T, g * hd, T, hd);
              addHeadTransposed(peek(tf.matMul(dOt, p)), dv, kvWidth, b * T, g * hd, T, hd);
            }
          });
        }
      }
      rotate(dqs, heads, hd, T, rope, scale, true);
      rotate(dkr, kvHeads, hd, T, rope, 1, true);
      return [upload(dqs, batch * T, qWidth), upload(dkr, batch * T, kvWidth), upload(dv, batch * T, kvWidth)];
    };
    return { value: upload(context, batch * T, qWidth), gradFunc };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(q, k, v) as tf.Tensor2D;
}

/**
 * dS = P ⊙ (dP − rowsum(dP ⊙ P)) for one causal [T, T] head. Entries above the diagonal have
 * P = 0 exactly (exp of -1e9 underflows), so their gradient is 0 and they are not visited.
 */
function softmaxBackward(p: Float32Array, dP: Float32Array, T: number, out: Float32Array): Float32Array {
  for (let i = 0; i < T; i++) {
    const row = i * T;
    let dot = 0;
    for (let j = 0; j <= i; j++) dot += dP[row + j] * p[row + j];
    for (let j = 0; j <= i; j++) out[row + j] = p[row + j] * (dP[row + j] - dot);
    for (let j = i + 1; j < T; j++) out[row + j] = 0;
  }
  return out;
}
