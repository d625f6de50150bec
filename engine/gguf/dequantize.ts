/**
 * ggml tensor data to F32, exactly as ggml's reference dequantize_row_* (ggml-quants.c). Every
 * product here is exact in float32 (f16 scales have 11 significant bits, the integer factors at
 * most 13 more), so computing in doubles and storing into a Float32Array gives ggml's bits.
 * Loops index bytes directly: no allocation per element or block, so a 0.5B model takes seconds.
 */
import { GgmlType, ggmlByteLength } from './ggml-types.js';

/** Every f16 bit pattern's value, built once (256 KB): conversion becomes one lookup. */
const F16_TABLE = (() => {
  const table = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const sign = h & 0x8000 ? -1 : 1;
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0) table[h] = sign * mantissa * 2 ** -24;
    else if (exponent === 31) table[h] = mantissa ? NaN : sign * Infinity;
    else table[h] = sign * (1 + mantissa / 1024) * 2 ** (exponent - 15);
  }
  return table;
})();

export function f16ToF32(bits: number): number {
  return F16_TABLE[bits & 0xffff];
}

const f16At = (b: Uint8Array, at: number): number => F16_TABLE[b[at] | (b[at + 1] << 8)];

export function dequantize(type: number, bytes: Uint8Array, count: number): Float32Array {
  const needed = ggmlByteLength(type, count);
  if (bytes.length < needed) throw new Error(`dequantize: ${count} values need ${needed} bytes, got ${bytes.length}`);
  const out = new Float32Array(count);
  switch (type) {
    case GgmlType.F32:
      new Uint8Array(out.buffer).set(bytes.subarray(0, needed));
      break;
    case GgmlType.F16:
      for (let i = 0; i < count; i++) out[i] = f16At(bytes, 2 * i);
      break;
    case GgmlType.BF16: {
      const bits = new Uint32Array(out.buffer);
      for (let i = 0; i < count; i++) bits[i] = ((bytes[2 * i] | (bytes[2 * i + 1] << 8)) << 16) >>> 0;
      break;
    }
    case GgmlType.Q8_0:
      q8_0(bytes, out);
      break;
    case GgmlType.Q4_0:
      q4_0(bytes, out);
      break;
    case GgmlType.Q4_K:
      q4_k(bytes, out);
      break;
    case GgmlType.Q5_K:
      q5_k(bytes, out);
      break;
    case GgmlType.Q6_K:
      q6_k(bytes, out);
      break;
    default:
      throw new Error(`internal: no dequantizer for ggml type ${type}`);
  }
  return out;
}

/** Block of 32: f16 d, 32 int8 q; y = q * d. */
function q8_0(b: Uint8Array, out: Float32Array): void {
  for (let at = 0, y = 0; y < out.length; at += 34, y += 32) {
    const d = f16At(b, at);
    for (let j = 0; j < 32; j++) out[y + j] = ((b[at + 2 + j] << 24) >> 24) * d;
  }
}

/** Block of 32: f16 d, 16 bytes of nibbles (low: elements 0..15, high: 16..31); y = (q - 8) * d. */
function q4_0(b: Uint8Array, out: Float32Array): void {
  for (let at = 0, y = 0; y < out.length; at += 18, y += 32) {
    const d = f16At(b, at);
    for (let j = 0; j < 16; j++) {
      const q = b[at + 2 + j];
      out[y + j] = ((q & 0xf) - 8) * d;
      out[y + j + 16] = ((q >> 4) - 8) * d;
    }
  }
}

/**
 * The 12 bytes of 6-bit scales and mins of Q4_K/Q5_K (ggml's get_scale_min_k4): sub-blocks 0-3
 * in the low 6 bits of bytes 0-3 (scales) and 4-7 (mins), sub-blocks 4-7 split between the
 * nibbles of bytes 8-11 and the top 2 bits of bytes 0-7.
 */
function scaleAt(b: Uint8Array, scales: number, j: number): number {
  return j < 4 ? b[scales + j] & 63 : (b[scales + j + 4] & 0xf) | ((b[scales + j - 4] >> 6) << 4);
}
function minAt(b: Uint8Array, scales: number, j: number): number {
  return j < 4 ? b[scales + j + 4] & 63 : (b[scales + j + 4] >> 4) | ((b[scales + j] >> 6) << 4);
}

/** Super-block of 256: f16 d, f16 dmin, 12 scale bytes, 128 bytes of nibbles; y = d*sc*q - dmin*m. */
function q4_k(b: Uint8Array, out: Float32Array): void {
  for (let at = 0, y = 0; y < out.length; at += 144, y += 256) {
    const d = f16At(b, at);
    const dmin = f16At(b, at + 2);
    const scales = at + 4;
    const qs = at + 16;
    for (let j = 0; j < 4; j++) {
      const d1 = Math.fround(d * scaleAt(b, scales, 2 * j)),
        m1 = Math.fround(dmin * minAt(b, scales, 2 * j));
      const d2 = Math.fround(d * scaleAt(b, scales, 2 * j + 1)),
        m2 = Math.fround(dmin * minAt(b, scales, 2 * j + 1));
      const q = qs + 32 * j,
        o = y + 64 * j;
      for (let l = 0; l < 32; l++) {
        out[o + l] = d1 * (b[q + l] & 0xf) - m1;
        out[o + 32 + l] = d2 * (b[q + l] >> 4) - m2;
      }
    }
  }
}

/** Like Q4_K plus a fifth bit per element in 32 qh bytes (bit 2j / 2j+1 for the j-th 64). */
function q5_k(b: Uint8Array, out: Float32Array): void {
  for (let at = 0, y = 0; y < out.length; at += 176, y += 256) {
    const d = f16At(b, at);
    const dmin = f16At(b, at + 2);
    const scales = at + 4;
    const qh = at + 16;
    const qs = at + 48;
    for (let j = 0; j < 4; j++) {
      const d1 = Math.fround(d * scaleAt(b, scales, 2 * j)),
        m1 = Math.fround(dmin * minAt(b, scales, 2 * j));
      const d2 = Math.fround(d * scaleAt(b, scales, 2 * j + 1)),
        m2 = Math.fround(dmin * minAt(b, scales, 2 * j + 1));
      const u1 = 1 << (2 * j),
        u2 = 2 << (2 * j);
      const q = qs + 32 * j,
        o = y + 64 * j;
      for (let l = 0; l < 32; l++) {
        const h = b[qh + l];
        out[o + l] = d1 * ((b[q + l] & 0xf) + (h & u1 ? 16 : 0)) - m1;
        out[o + 32 + l] = d2 * ((b[q + l] >> 4) + (h & u2 ? 16 : 0)) - m2;
      }
    }
  }
}

/** Super-block of 256: 128 ql (low nibbles), 64 qh (2 high bits each), 16 int8 scales, f16 d. */
function q6_k(b: Uint8Array, out: Float32Array): void {
  for (let at = 0, y = 0; y < out.length; at += 210, y += 256) {
    const d = f16At(b, at + 208);
    for (let n = 0; n < 2; n++) {
      const ql = at + 64 * n,
        qh = at + 128 + 32 * n,
        sc = at + 192 + 8 * n,
        o = y + 128 * n;
      // Scales change every 16 elements: hoist the four in use out of the element loop.
      for (let is = 0; is < 2; is++) {
        const s1 = d * ((b[sc + is] << 24) >> 24),
          s2 = d * ((b[sc + is + 2] << 24) >> 24);
        const s3 = d * ((b[sc + is + 4] << 24) >> 24),
          s4 = d * ((b[sc + is + 6] << 24) >> 24);
        for (let l = 16 * is; l < 16 * is + 16; l++) {
          const h = b[qh + l],
            lo = b[ql + l],
            lo2 = b[ql + l + 32];
          out[o + l] = s1 * (((lo & 0xf) | ((h & 3) << 4)) - 32);
          out[o + l + 32] = s2 * (((lo2 & 0xf) | (((h >> 2) & 3) << 4)) - 32);
          out[o + l + 64] = s3 * (((lo >> 4) | (((h >> 4) & 3) << 4)) - 32);
          out[o + l + 96] = s4 * (((lo2 >> 4) | (((h >> 6) & 3) << 4)) - 32);
        }
      }
    }
  }
}
