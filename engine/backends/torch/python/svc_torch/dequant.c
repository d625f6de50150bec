/*
 * GGUF block dequantisation for kept-quantised bases (quantized.py), built once per machine by
 * native_dequant.py with the system's C compiler and called through ctypes. One pass over the
 * blocks writes the weight in its compute dtype, where the torch version makes several passes
 * over a float32 copy. Each value is computed in float32 in the order of gguf-py's numpy
 * dequantisers (ggml-quants.c's reference), so the floats are theirs bit for bit: the build turns
 * off floating-point contraction, as a fused multiply-add would round once instead of twice.
 * bfloat16 is float32 rounded to nearest even, as torch's own conversion does.
 */
#include <stdint.h>
#include <string.h>

static float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF, bits;
    if (exponent == 0) {
        if (mantissa == 0) {
            bits = sign;
        } else { /* subnormal: normalise it */
            exponent = 113;
            while (!(mantissa & 0x400)) {
                mantissa <<= 1;
                exponent--;
            }
            bits = sign | (exponent << 23) | ((mantissa & 0x3FF) << 13);
        }
    } else if (exponent == 31) {
        bits = sign | 0x7F800000 | (mantissa << 13);
    } else {
        bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
    }
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static uint16_t read_u16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }

static inline uint16_t f32_to_bf16(float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    if ((bits & 0x7FFFFFFF) > 0x7F800000) return 0x7FC0; /* NaN */
    return (uint16_t)((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16);
}

/* Writes one block's n floats to out as float32 (bf16 == 0) or bfloat16. */
static void store(const float *values, int n, void *out, int64_t index, int bf16) {
    if (bf16) {
        uint16_t *o = (uint16_t *)out + index;
        for (int i = 0; i < n; i++) o[i] = f32_to_bf16(values[i]);
    } else {
        memcpy((float *)out + index, values, (size_t)n * sizeof(float));
    }
}

/* Q8_0: 34 bytes, d (f16) then 32 int8 values. */
void svc_dequantize_q8_0(const uint8_t *blocks, int64_t count, void *out, int bf16) {
    float values[32];
    for (int64_t b = 0; b < count; b++) {
        const uint8_t *block = blocks + b * 34;
        const float d = f16_to_f32(read_u16(block));
        const int8_t *q = (const int8_t *)(block + 2);
        for (int i = 0; i < 32; i++) values[i] = (float)q[i] * d;
        store(values, 32, out, b * 32, bf16);
    }
}

/* Q4_K: 144 bytes, d and dmin (f16), 12 bytes of six-bit scales and mins, 128 bytes of nibbles. */
void svc_dequantize_q4_k(const uint8_t *blocks, int64_t count, void *out, int bf16) {
    float values[256];
    for (int64_t b = 0; b < count; b++) {
        const uint8_t *block = blocks + b * 144, *packed = block + 4, *nibbles = block + 16;
        const float d = f16_to_f32(read_u16(block)), dmin = f16_to_f32(read_u16(block + 2));
        float scale[8], offset[8];
        for (int j = 0; j < 8; j++) {
            int sc, mn;
            if (j < 4) {
                sc = packed[j] & 63;
                mn = packed[j + 4] & 63;
            } else {
                sc = (packed[j + 4] & 0x0F) | ((packed[j - 4] >> 6) << 4);
                mn = (packed[j + 4] >> 4) | ((packed[j] >> 6) << 4);
            }
            scale[j] = d * (float)sc;
            offset[j] = dmin * (float)mn;
        }
        /* Sub-block 2c holds bytes 32c..32c+31's low nibbles, 2c + 1 their high ones. */
        for (int c = 0; c < 4; c++) {
            const uint8_t *q = nibbles + 32 * c;
            float *low = values + 64 * c, *high = low + 32;
            const float s0 = scale[2 * c], o0 = offset[2 * c], s1 = scale[2 * c + 1], o1 = offset[2 * c + 1];
            for (int l = 0; l < 32; l++) {
                low[l] = (float)(q[l] & 0x0F) * s0 - o0;
                high[l] = (float)(q[l] >> 4) * s1 - o1;
            }
        }
        store(values, 256, out, b * 256, bf16);
    }
}

/* Q6_K: 210 bytes, 128 of low nibbles, 64 of high bit pairs, 16 int8 scales, d (f16). */
void svc_dequantize_q6_k(const uint8_t *blocks, int64_t count, void *out, int bf16) {
    float values[256];
    for (int64_t b = 0; b < count; b++) {
        const uint8_t *block = blocks + b * 210, *ql = block, *qh = block + 128;
        const int8_t *scales = (const int8_t *)(block + 192);
        const float d = f16_to_f32(read_u16(block + 208));
        float scale[16];
        for (int j = 0; j < 16; j++) scale[j] = d * (float)scales[j];
        for (int half = 0; half < 2; half++) {
            const uint8_t *lo = ql + 64 * half, *hi = qh + 32 * half;
            float *y = values + 128 * half;
            const float *s = scale + 8 * half;
            /* 16 values share a scale: one loop per group, so each loop's scales are constants. */
            for (int group = 0; group < 2; group++) {
                const float s1 = s[group], s2 = s[group + 2], s3 = s[group + 4], s4 = s[group + 6];
                for (int l = 16 * group; l < 16 * group + 16; l++) {
                    const int q1 = (lo[l] & 0x0F) | (((hi[l] >> 0) & 3) << 4);
                    const int q2 = (lo[l + 32] & 0x0F) | (((hi[l] >> 2) & 3) << 4);
                    const int q3 = (lo[l] >> 4) | (((hi[l] >> 4) & 3) << 4);
                    const int q4 = (lo[l + 32] >> 4) | (((hi[l] >> 6) & 3) << 4);
                    y[l] = ((float)q1 - 32.0f) * s1;
                    y[l + 32] = ((float)q2 - 32.0f) * s2;
                    y[l + 64] = ((float)q3 - 32.0f) * s3;
                    y[l + 96] = ((float)q4 - 32.0f) * s4;
                }
            }
        }
        store(values, 256, out, b * 256, bf16);
    }
}
