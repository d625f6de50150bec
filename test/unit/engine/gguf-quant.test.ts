/**
 * engine/gguf's (de)quantisation against llama.cpp's own reference, gguf-py's numpy port of
 * ggml-quants.c, run on bytes made here: dequantize must give exactly numpy's floats for every
 * supported type, quantize exactly its bytes where gguf-py has a quantizer (Q8_0, Q4_0, BF16, F16).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dequantize } from '../../../engine/gguf/dequantize.js';
import { GgmlType, ggmlTypeInfo, ggmlTypeName } from '../../../engine/gguf/ggml-types.js';
import { quantize } from '../../../engine/gguf/quantize.js';
import { withTempDir } from '../../fixtures/engine/tiny-model.js';
import { ggufPyPath } from '../../support/llamaCppSource.js';
import { torchVenvPython } from '../../../engine/backends/torch/venv.js';

/** The system Python has numpy; the one first on PATH may not. */
const PYTHON = torchVenvPython();

function numpy(dir: string, mode: 'dequantize' | 'quantize', type: GgmlType, input: Uint8Array): Uint8Array {
  const source = join(dir, `${mode}-${type}.in`),
    target = join(dir, `${mode}-${type}.out`);
  writeFileSync(source, input);
  execFileSync(PYTHON, ['-B', join(import.meta.dirname, 'gguf-numpy.py'), mode, String(type), source, target], {
    env: { ...process.env, PYTHONPATH: ggufPyPath(), PYTHONDONTWRITEBYTECODE: '1' },
  });
  return new Uint8Array(readFileSync(target));
}

/** Deterministic pseudo-random numbers (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Byte offsets of each block's f16 scales: random bits there could be NaN or huge. */
const SCALE_FIELDS: Partial<Record<GgmlType, number[]>> = {
  [GgmlType.Q8_0]: [0],
  [GgmlType.Q4_0]: [0],
  [GgmlType.Q4_K]: [0, 2],
  [GgmlType.Q5_K]: [0, 2],
  [GgmlType.Q6_K]: [208],
};

/** Random quantised bytes (every bit pattern of the packed values) with finite, varied f16 scales. */
function randomBlocks(type: GgmlType, blocks: number, seed: number): Uint8Array {
  const next = random(seed);
  const { blockBytes } = ggmlTypeInfo(type);
  const bytes = Uint8Array.from({ length: blocks * blockBytes }, () => Math.floor(next() * 256));
  for (let b = 0; b < blocks; b++) {
    for (const field of SCALE_FIELDS[type] ?? []) {
      const h = (next() < 0.5 ? 0x8000 : 0) | ((1 + Math.floor(next() * 20)) << 10) | Math.floor(next() * 1024);
      bytes[b * blockBytes + field] = h & 0xff;
      bytes[b * blockBytes + field + 1] = h >> 8;
    }
  }
  return bytes;
}

function gaussian(count: number, seed: number, scale = 1): Float32Array {
  const next = random(seed);
  return Float32Array.from({ length: count }, () => scale * Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next()));
}

/** Equal bit for bit, except that any NaN equals any NaN (payloads are not part of the contract). */
function assertSameFloats(actual: Float32Array, expected: Float32Array, what: string): void {
  assert.equal(actual.length, expected.length, `${what}: length`);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < actual.length; i++) {
    if (Number.isNaN(actual[i]) && Number.isNaN(expected[i])) continue;
    if (a[i] !== e[i]) assert.fail(`${what}: element ${i} is ${actual[i]} (0x${a[i].toString(16)}), numpy says ${expected[i]} (0x${e[i].toString(16)})`);
  }
}

const ALL: GgmlType[] = [GgmlType.F32, GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K];

describe('engine/gguf (de)quantisation vs gguf-py numpy', function () {
  this.timeout(60_000);

  for (const type of ALL) {
    it(`dequantizes ${ggmlTypeName(type)} exactly as gguf-py`, async () => {
      await withTempDir(async (dir) => {
        const { blockElements } = ggmlTypeInfo(type);
        const count = blockElements === 1 ? 4096 : blockElements * 64;
        const bytes =
          blockElements === 1 ? randomBlocks(GgmlType.F32, (count * ggmlTypeInfo(type).blockBytes) / 4, 7 + type) : randomBlocks(type, 64, 7 + type);
        const ours = dequantize(type, bytes, count);
        const theirs = numpy(dir, 'dequantize', type, bytes);
        assertSameFloats(ours, new Float32Array(theirs.buffer, theirs.byteOffset, theirs.byteLength / 4), ggmlTypeName(type));
      });
    });
  }

  for (const type of [GgmlType.F16, GgmlType.BF16, GgmlType.Q8_0, GgmlType.Q4_0]) {
    it(`quantizes ${ggmlTypeName(type)} to exactly gguf-py's bytes`, async () => {
      await withTempDir(async (dir) => {
        const data = gaussian(32 * 256, 100 + type, 0.05);
        // Edges: zeros (d = 0), ties, exact halves, large and tiny (f16 subnormal) values.
        data.set([0, 0.5, -0.5, 1.5, 2.5, 65504, 65520, 1e-7, -3e-8, 6e-5, 1e5, -1e5], 0);
        data.fill(0, 32, 64);
        data.fill(0.25, 64, 96);
        const ours = quantize(type, data);
        assert.deepEqual(Buffer.from(ours), Buffer.from(numpy(dir, 'quantize', type, new Uint8Array(data.buffer))), ggmlTypeName(type));
      });
    });
  }

  /** Worst error relative to the largest magnitude, for gaussian weights; loose but able to fail. */
  const BOUNDS: Record<GgmlType, number> = {
    [GgmlType.F32]: 0,
    [GgmlType.F16]: 1e-3,
    [GgmlType.BF16]: 4e-3,
    [GgmlType.Q8_0]: 0.01,
    [GgmlType.Q4_0]: 0.1,
    [GgmlType.Q4_K]: 0.1,
    [GgmlType.Q5_K]: 0.05,
    [GgmlType.Q6_K]: 0.03,
  };
  for (const type of ALL) {
    it(`round-trips ${ggmlTypeName(type)} within ${BOUNDS[type]} of the largest value`, () => {
      const data = gaussian(256 * 16, 300 + type, 0.02);
      const back = dequantize(type, quantize(type, data), data.length);
      let worst = 0,
        largest = 0;
      for (let i = 0; i < data.length; i++) {
        worst = Math.max(worst, Math.abs(back[i] - data[i]));
        largest = Math.max(largest, Math.abs(data[i]));
      }
      assert.ok(worst <= BOUNDS[type] * largest, `${ggmlTypeName(type)}: worst error ${worst} vs largest ${largest}`);
      // And it is real quantisation, not a copy: only F32 is lossless.
      if (type !== GgmlType.F32) assert.ok(worst > 0, `${ggmlTypeName(type)} lost nothing?`);
    });
  }

  it('quantizes all-zero and constant blocks of the K-quants without NaN', () => {
    for (const type of [GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K]) {
      for (const value of [0, 0.5, -0.5]) {
        const back = dequantize(type, quantize(type, new Float32Array(256).fill(value)), 256);
        for (const v of back) assert.ok(Math.abs(v - value) <= 0.02, `${ggmlTypeName(type)} constant ${value} came back as ${v}`);
      }
    }
  });
});
