/**
 * F32 to ggml tensor data, for writing models in the types real GGUFs use. F16, BF16, Q8_0 and
 * Q4_0 match ggml's reference quantize_row_*_ref bit for bit (gguf-py's numpy ports are the
 * test's reference). The K-quants use a simple valid quantizer (per-sub-block range, 6-bit
 * packed scales exactly as ggml lays them out) rather than llama.cpp's error-minimising search:
 * good enough for test models, and every byte decodes with ggml's own dequantizer.
 */
import { GgmlType, ggmlByteLength } from './ggml-types.js';

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** f32 to IEEE half bits, round to nearest even (as numpy's astype(float16) and ggml's F16C path). */
export function f32ToF16(value: number): number {
  f32Scratch[0] = value;
  const x = u32Scratch[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 127 + 15;
  if (e >= 31) return sign | 0x7c00;
  if (e <= 0) {
    // Subnormal half: value / 2^-24, rounded.
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    const half = 2 ** (shift - 1);
    let r = Math.floor(mant / 2 ** shift);
    const rem = mant - r * 2 ** shift;
    if (rem > half || (rem === half && r & 1)) r++;
    return sign | r;
  }
  let r = (e << 10) | (mant >> 13);
  const rem = mant & 0x1fff;
  // A carry out of the mantissa correctly bumps the exponent (up to infinity).
  if (rem > 0x1000 || (rem === 0x1000 && r & 1)) r++;
  return sign | r;
}

/** f32 to bfloat16 bits as ggml_compute_fp32_to_bf16: NaN made quiet, else round to nearest even. */
export function f32ToBf16(value: number): number {
  f32Scratch[0] = value;
  const x = u32Scratch[0];
  if ((x & 0x7fffffff) > 0x7f800000) return (x >>> 16) | 64;
  return Math.floor((x + 0x7fff + ((x >>> 16) & 1)) / 65536) & 0xffff;
}

const fround = Math.fround;
/** ggml's roundf: half away from zero. */
const roundAway = (v: number): number => (v < 0 ? -Math.floor(-v + 0.5) : Math.floor(v + 0.5));

function putF16(out: Uint8Array, at: number, value: number): number {
  const h = f32ToF16(value);
  out[at] = h & 0xff;
  out[at + 1] = h >> 8;
  return h;
}

export function quantize(type: number, data: Float32Array): Uint8Array {
  const count = data.length;
  const out = new Uint8Array(ggmlByteLength(type, count));
  switch (type) {
    case GgmlType.F32:
      out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
      break;
    case GgmlType.F16:
      for (let i = 0; i < count; i++) putF16(out, 2 * i, data[i]);
      break;
    case GgmlType.BF16:
      for (let i = 0; i < count; i++) {
        const h = f32ToBf16(data[i]);
        out[2 * i] = h & 0xff;
        out[2 * i + 1] = h >> 8;
      }
      break;
    case GgmlType.Q8_0:
      q8_0(data, out);
      break;
    case GgmlType.Q4_0:
      q4_0(data, out);
      break;
    case GgmlType.Q4_K:
      qk_k(data, out, 15, false);
      break;
    case GgmlType.Q5_K:
      qk_k(data, out, 31, true);
      break;
    case GgmlType.Q6_K:
      q6_k(data, out);
      break;
    default:
      throw new Error(`internal: no quantizer for ggml type ${type}`);
  }
  return out;
}

/** quantize_row_q8_0_ref: d = amax/127 in float32, q = roundf(x/d). */
function q8_0(x: Float32Array, out: Uint8Array): void {
  for (let y = 0, at = 0; y < x.length; y += 32, at += 34) {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[y + j]));
    const d = fround(amax / 127);
    const id = d === 0 ? 0 : fround(1 / d);
    putF16(out, at, d);
    for (let j = 0; j < 32; j++) out[at + 2 + j] = roundAway(fround(x[y + j] * id)) & 0xff;
  }
}

/** quantize_row_q4_0_ref: d = (value of largest magnitude)/-8, q = min(15, trunc(x/d + 8.5)). */
function q4_0(x: Float32Array, out: Uint8Array): void {
  for (let y = 0, at = 0; y < x.length; y += 32, at += 18) {
    let amax = 0,
      max = 0;
    for (let j = 0; j < 32; j++) {
      const v = x[y + j];
      if (Math.abs(v) > amax) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = fround(max / -8);
    const id = d === 0 ? 0 : fround(1 / d);
    putF16(out, at, d);
    const q = (j: number) => Math.min(15, Math.trunc(fround(fround(x[y + j] * id) + 8.5)));
    for (let j = 0; j < 16; j++) out[at + 2 + j] = q(j) | (q(j + 16) << 4);
  }
}

/** Stores sub-block j's 6-bit scale and min where ggml's get_scale_min_k4 finds them. */
function packScaleMin(out: Uint8Array, scales: number, j: number, sc: number, m: number): void {
  if (j < 4) {
    out[scales + j] = (out[scales + j] & 0xc0) | sc;
    out[scales + j + 4] = (out[scales + j + 4] & 0xc0) | m;
  } else {
    out[scales + j + 4] = (sc & 0xf) | ((m & 0xf) << 4);
    out[scales + j - 4] |= (sc >> 4) << 6;
    out[scales + j] |= (m >> 4) << 6;
  }
}

/**
 * Q4_K (levels 15) and Q5_K (levels 31): per 32-element sub-block, scale = range/levels and
 * min = -min(0, lowest); the super-block's f16 d and dmin make those 6-bit integers.
 */
function qk_k(x: Float32Array, out: Uint8Array, levels: number, fifthBit: boolean): void {
  const blockBytes = fifthBit ? 176 : 144;
  const scaleF = new Float64Array(8),
    minF = new Float64Array(8);
  for (let y = 0, at = 0; y < x.length; y += 256, at += blockBytes) {
    let maxScale = 0,
      maxMin = 0;
    for (let j = 0; j < 8; j++) {
      let lo = 0,
        hi = -Infinity;
      for (let l = 0; l < 32; l++) {
        const v = x[y + 32 * j + l];
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
      scaleF[j] = (hi - lo) / levels;
      minF[j] = -lo;
      maxScale = Math.max(maxScale, scaleF[j]);
      maxMin = Math.max(maxMin, minF[j]);
    }
    // The 6-bit integers are computed against the f16-rounded super-scales the decoder will use.
    const d = f16Value(putF16(out, at, maxScale / 63));
    const dmin = f16Value(putF16(out, at + 2, maxMin / 63));
    const scales = at + 4;
    const qh = at + 16;
    const qs = fifthBit ? at + 48 : at + 16;
    for (let j = 0; j < 8; j++) {
      const sc = d > 0 ? Math.min(63, Math.round(scaleF[j] / d)) : 0;
      const m = dmin > 0 ? Math.min(63, Math.round(minF[j] / dmin)) : 0;
      packScaleMin(out, scales, j, sc, m);
      const step = fround(d * sc),
        offset = fround(dmin * m);
      const pair = j >> 1,
        high = j & 1;
      for (let l = 0; l < 32; l++) {
        const q = step > 0 ? Math.max(0, Math.min(levels, Math.round((x[y + 32 * j + l] + offset) / step))) : 0;
        out[qs + 32 * pair + l] |= (q & 0xf) << (4 * high);
        if (fifthBit && q & 16) out[qh + l] |= 1 << j;
      }
    }
  }
}

/** Q6_K: per 16-element sub-block a signed 8-bit scale of f16 d, q in -32..31 stored +32. */
function q6_k(x: Float32Array, out: Uint8Array): void {
  const scaleF = new Float64Array(16);
  const q = new Uint8Array(256);
  for (let y = 0, at = 0; y < x.length; y += 256, at += 210) {
    let maxScale = 0;
    for (let s = 0; s < 16; s++) {
      let amax = 0;
      for (let l = 0; l < 16; l++) amax = Math.max(amax, Math.abs(x[y + 16 * s + l]));
      scaleF[s] = amax / 31;
      maxScale = Math.max(maxScale, scaleF[s]);
    }
    const d = f16Value(putF16(out, at + 208, maxScale / 127));
    for (let s = 0; s < 16; s++) {
      const sc = d > 0 ? Math.min(127, Math.round(scaleF[s] / d)) : 0;
      out[at + 192 + s] = sc;
      const step = fround(d * sc);
      for (let l = 0; l < 16; l++) {
        const v = step > 0 ? Math.max(-32, Math.min(31, Math.round(x[y + 16 * s + l] / step))) : 0;
        q[16 * s + l] = v + 32;
      }
    }
    for (let n = 0; n < 2; n++) {
      const ql = at + 64 * n,
        qh = at + 128 + 32 * n,
        o = 128 * n;
      for (let l = 0; l < 32; l++) {
        const q1 = q[o + l],
          q2 = q[o + l + 32],
          q3 = q[o + l + 64],
          q4 = q[o + l + 96];
        out[ql + l] = (q1 & 0xf) | ((q3 & 0xf) << 4);
        out[ql + l + 32] = (q2 & 0xf) | ((q4 & 0xf) << 4);
        out[qh + l] = (q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6);
      }
    }
  }
}

/** The value an f16 bit pattern holds (for computing integers against what will be decoded). */
function f16Value(h: number): number {
  const exponent = (h >> 10) & 0x1f,
    mantissa = h & 0x3ff;
  const magnitude = exponent === 0 ? mantissa * 2 ** -24 : (1 + mantissa / 1024) * 2 ** (exponent - 15);
  return h & 0x8000 ? -magnitude : magnitude;
}
