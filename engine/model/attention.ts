/**
 * RoPE and causal self-attention as one custom-gradient op, run as per-head plain 2-D products.
 *
 * Why one op: tfjs-wasm multiplies untransposed 2-D matrices through XNNPACK (~26 GFLOP/s here)
 * but batched or transposed ones through a naive loop (~2.3 GFLOP/s), and its Slice (so Unpack,
 * Split) re-reads the whole input for every slice it takes: cutting [B·H, T, hd] into heads cost
 * ~12 ms a cut at d=256, more than the attention products themselves. Here q, k and v are read
 * once, every head is cut out in plain JavaScript (RoPE applied and kᵀ written transposed on the
 * way), every product is an untransposed 2-D one, and the backward pass is written out:
 *   S = s·q kᵀ + mask, P = softmax(S), O = P v
 *   dP = dO vᵀ,  dS = P ⊙ (dP − rowsum(dP ⊙ P)),  dq = s·dS k,  dk = dSᵀ (s·q),  dv = Pᵀ dO
 * with the transposed products taken as their transposes (dkᵀ = (s·q)ᵀ dS, dvᵀ = dOᵀ P) and RoPE's
 * backward being the rotation by −θ. Grouped-query heads share their key/value head, whose
 * gradient sums over the group (as ggml's broadcast does in the forward pass).
 */
import { tf } from '../backend.js';

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

/**
 * Cuts one head (columns col..col+hd of rows row0..row0+T of a row-major [rows, width] matrix)
 * into `out`, as [T, hd], or as [hd, T] when `transposed`; rotated by RoPE when `rope` is given,
 * then multiplied by `scale`.
 */
function readHead(src: Float32Array, width: number, row0: number, col: number, T: number, hd: number, rope: RopeTables | undefined, scale: number, transposed: boolean): Float32Array {
  const out = new Float32Array(T * hd);
  for (let t = 0; t < T; t++) {
    const base = (row0 + t) * width + col;
    if (!rope) {
      for (let d = 0; d < hd; d++) out[transposed ? d * T + t : t * hd + d] = src[base + d] * scale;
      continue;
    }
    const half = hd >> 1;
    for (let i = 0; i < half; i++) {
      const a = rope.first[i];
      const b = rope.second[i];
      const c = rope.cos[t * half + i];
      const s = rope.sin[t * half + i];
      const xa = src[base + a];
      const xb = src[base + b];
      out[transposed ? a * T + t : t * hd + a] = (xa * c - xb * s) * scale;
      out[transposed ? b * T + t : t * hd + b] = (xb * c + xa * s) * scale;
    }
  }
  return out;
}

/** The inverse of readHead for gradients: adds head `g` ([T, hd], or [hd, T] when `transposed`) into dst, rotated back by RoPE. */
function addHead(g: Float32Array, dst: Float32Array, width: number, row0: number, col: number, T: number, hd: number, rope: RopeTables | undefined, scale: number, transposed: boolean): void {
  for (let t = 0; t < T; t++) {
    const base = (row0 + t) * width + col;
    if (!rope) {
      for (let d = 0; d < hd; d++) dst[base + d] += g[transposed ? d * T + t : t * hd + d] * scale;
      continue;
    }
    const half = hd >> 1;
    for (let i = 0; i < half; i++) {
      const a = rope.first[i];
      const b = rope.second[i];
      const c = rope.cos[t * half + i];
      const s = rope.sin[t * half + i];
      const ga = g[transposed ? a * T + t : t * hd + a] * scale;
      const gb = g[transposed ? b * T + t : t * hd + b] * scale;
      dst[base + a] += ga * c + gb * s;
      dst[base + b] += gb * c - ga * s;
    }
  }
}

/**
 * softmax(s · rope(q) · rope(k)ᵀ + mask) · v per head. q [B·T, H·hd], k and v [B·T, Hkv·hd]
 * (token rows, heads side by side, as the projections give them) -> [B·T, H·hd], in that layout,
 * so no transposes are needed around it. `mask` is [T, T]: 0 where a position may attend, -1e9 where not.
 */
export function ropeCausalAttention(q: tf.Tensor2D, k: tf.Tensor2D, v: tf.Tensor2D, shape: AttentionShape, rope: RopeTables, mask: tf.Tensor2D, scale: number): tf.Tensor2D {
  const { batch, length: T, heads, kvHeads, headDim: hd } = shape;
  const group = heads / kvHeads;
  const qWidth = heads * hd;
  const kvWidth = kvHeads * hd;
  const upload = (data: Float32Array, rows: number, cols: number) => tf.tensor2d(data, [rows, cols]);
  const op = tf.customGrad(((qIn: tf.Tensor, kIn: tf.Tensor, vIn: tf.Tensor, save: tf.GradSaveFunc) => {
    const qd = qIn.dataSync() as Float32Array;
    const kd = kIn.dataSync() as Float32Array;
    const vd = vIn.dataSync() as Float32Array;
    const context = new Float32Array(batch * T * qWidth);
    const probs: tf.Tensor2D[] = [];
    for (let b = 0; b < batch; b++) {
      for (let g = 0; g < kvHeads; g++) {
        tf.tidy(() => {
          const kt = upload(readHead(kd, kvWidth, b * T, g * hd, T, hd, rope, 1, true), hd, T);
          const vh = upload(readHead(vd, kvWidth, b * T, g * hd, T, hd, undefined, 1, false), T, hd);
          for (let h = g * group; h < (g + 1) * group; h++) {
            const qh = upload(readHead(qd, qWidth, b * T, h * hd, T, hd, rope, scale, false), T, hd);
            const p = tf.softmax(tf.matMul(qh, kt).add(mask)) as tf.Tensor2D;
            addHead(tf.matMul(p, vh).dataSync() as Float32Array, context, qWidth, b * T, h * hd, T, hd, undefined, 1, false);
            probs.push(tf.keep(p));
          }
        });
      }
    }
    save(probs);
    for (const p of probs) p.dispose(); // save() holds its own references while a gradient is being recorded

    const gradFunc = (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const dyd = dy.dataSync() as Float32Array;
      const dq = new Float32Array(qd.length);
      const dk = new Float32Array(kd.length);
      const dv = new Float32Array(vd.length);
      for (let b = 0; b < batch; b++) {
        for (let g = 0; g < kvHeads; g++) {
          tf.tidy(() => {
            const kh = upload(readHead(kd, kvWidth, b * T, g * hd, T, hd, rope, 1, false), T, hd);
            const vt = upload(readHead(vd, kvWidth, b * T, g * hd, T, hd, undefined, 1, true), hd, T);
            for (let h = g * group; h < (g + 1) * group; h++) {
              const p = saved[b * heads + h] as tf.Tensor2D;
              const dO = upload(readHead(dyd, qWidth, b * T, h * hd, T, hd, undefined, 1, false), T, hd);
              const dOt = upload(readHead(dyd, qWidth, b * T, h * hd, T, hd, undefined, 1, true), hd, T);
              const qt = upload(readHead(qd, qWidth, b * T, h * hd, T, hd, rope, scale, true), hd, T);
              const dP = tf.matMul(dO, vt);
              const dS = p.mul(dP.sub(dP.mul(p).sum(-1, true))) as tf.Tensor2D;
              addHead(tf.matMul(dS, kh).dataSync() as Float32Array, dq, qWidth, b * T, h * hd, T, hd, rope, scale, false);
              addHead(tf.matMul(qt, dS).dataSync() as Float32Array, dk, kvWidth, b * T, g * hd, T, hd, rope, 1, true);
              addHead(tf.matMul(dOt, p).dataSync() as Float32Array, dv, kvWidth, b * T, g * hd, T, hd, undefined, 1, true);
            }
          });
        }
      }
      return [upload(dq, batch * T, qWidth), upload(dk, batch * T, kvWidth), upload(dv, batch * T, kvWidth)];
    };
    return { value: upload(context, batch * T, qWidth), gradFunc };
  }) as unknown as Parameters<typeof tf.customGrad>[0]);
  return op(q, k, v) as tf.Tensor2D;
}
