/**
 * The test models mean what the architecture descriptions say: llama.cpp's next-token
 * log-probabilities agree with an independent float64 numpy forward pass (test/support/
 * numpyForward.py) for llama (normal RoPE, GQA, rope_freqs), qwen2 (NEOX RoPE, q/k/v biases)
 * and qwen3 (q/k RMSNorm, tied output). Also shows the tolerances a forward-pass comparison
 * against llama.cpp's CPU F32 path needs: ~1e-2 near the top of the distribution, a few 1e-2 more
 * down in the tail (llama.cpp's own rounding, not the models').
 */
import assert from 'node:assert/strict';
import { compareWithReference, disposeLlamaCppReference, logProbabilities, tokenize } from '../../support/llamaCppReference.js';
import { numpyLogits } from '../../support/numpyReference.js';
import { buildTestModel, type TestModelOptions } from '../../support/testModels.js';

describe('test models: llama.cpp agrees with a numpy forward pass', function () {
  this.timeout(120000);
  after(disposeLlamaCppReference);

  const CASES: TestModelOptions[] = [
    { arch: 'llama', vocab: 'llama-spm', ropeFreqFactors: [2, 3, 5, 8] },
    { arch: 'llama', vocab: 'llama-spm', headCountKv: 1, tiedOutput: true },
    { arch: 'qwen2', vocab: 'llama-spm' },
    { arch: 'qwen3', vocab: 'llama-spm', headDim: 16 },
  ];
  for (const options of CASES) {
    it(`${options.arch} ${JSON.stringify(options)}`, async () => {
      const model = await buildTestModel(options);
      const ids = await tokenize(model, 'The quick brown fox jumps over the lazy dog');
      const reference = await logProbabilities(model, ids);
      const numpy = await numpyLogits(model, ids);
      const near = compareWithReference(numpy, reference, -5);
      const tail = compareWithReference(numpy, reference, -30);
      assert.ok(near.sameArgmax, 'same most probable token');
      assert.ok(near.maxDiff < 0.03, `near the top: ${JSON.stringify(near)}`);
      assert.ok(tail.maxDiff < 0.1, `down to -30: ${JSON.stringify(tail)}`);
    });
  }

  it('the comparison can fail: a different prompt position gives different log-probabilities', async () => {
    const model = await buildTestModel(CASES[0]);
    const ids = await tokenize(model, 'The quick brown fox jumps over the lazy dog');
    const numpy = await numpyLogits(model, ids.slice(0, -1));
    assert.ok(compareWithReference(numpy, await logProbabilities(model, ids), -5).maxDiff > 0.5);
  });
});
