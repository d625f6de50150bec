import assert from 'node:assert/strict';
import { torchProcessEnv } from '../../../engine/backends/torch/env.js';

describe('torch process environment', () => {
  const names = ['OPENBLAS_NUM_THREADS', 'GOMP_SPINCOUNT', 'OPENBLAS_THREAD_TIMEOUT', 'SVC_TORCH_THREADS'];
  let saved: Record<string, string | undefined>;
  beforeEach(() => {
    saved = Object.fromEntries(names.map((n) => [n, process.env[n]]));
    for (const n of names) delete process.env[n];
  });
  afterEach(() => {
    for (const [n, v] of Object.entries(saved))
      if (v === undefined) delete process.env[n];
      else process.env[n] = v;
  });

  it('lets idle OpenMP and OpenBLAS threads sleep at once, and leaves OpenBLAS every core', () => {
    const env = torchProcessEnv();
    assert.equal(env.GOMP_SPINCOUNT, '1000');
    assert.equal(env.OPENBLAS_THREAD_TIMEOUT, '4');
    assert.equal(env.OPENBLAS_NUM_THREADS, undefined, "OpenBLAS's own default: every core, as torch's pool");
  });

  it('gives OpenBLAS the thread count torch is given', () => {
    assert.equal(torchProcessEnv({ SVC_TORCH_THREADS: '3' }).OPENBLAS_NUM_THREADS, '3');
    process.env.SVC_TORCH_THREADS = '5';
    assert.equal(torchProcessEnv().OPENBLAS_NUM_THREADS, '5');
  });

  it('keeps what the user set', () => {
    Object.assign(process.env, { OPENBLAS_NUM_THREADS: '1', GOMP_SPINCOUNT: '0', OPENBLAS_THREAD_TIMEOUT: '10' });
    const env = torchProcessEnv({ SVC_TORCH_THREADS: '2' });
    assert.deepEqual([env.OPENBLAS_NUM_THREADS, env.GOMP_SPINCOUNT, env.OPENBLAS_THREAD_TIMEOUT], ['1', '0', '10']);
  });
});
