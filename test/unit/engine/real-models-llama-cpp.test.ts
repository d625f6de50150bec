/**
 * buildTestModel's files are real models to llama.cpp: each architecture and weight type loads,
 * decodes greedily and deterministically, and gives a proper, peaked next-token distribution
 * over the whole vocabulary (the properties the engine's forward-pass comparisons rely on).
 * svc's own header reading agrees with what was asked for.
 */
import assert from 'node:assert/strict';
import { configFromMetadata } from '../../../engine/gguf/model-config.js';
import { readGgufHeader } from '../../../engine/gguf/reader.js';
import { disposeLlamaCppReference, greedy, logProbabilities, tokenize } from '../../support/llamaCppReference.js';
import { buildTestModel, resolveTestModelOptions, storedType, type TestModelOptions, type TestWeightType } from '../../support/testModels.js';

const PROMPT = 'The quick brown fox jumps over the lazy dog. Once upon a time';

function argmax(values: Float32Array): number {
  let best = 0;
  for (let i = 1; i < values.length; i++) if (values[i] > values[best]) best = i;
  return best;
}

/** Loads, checks the distribution and greedy decoding; returns the prompt's log-probabilities. */
async function checkModel(options: TestModelOptions): Promise<Float32Array> {
  const path = await buildTestModel(options);
  const prompt = await tokenize(path, PROMPT);
  const logProbs = await logProbabilities(path, prompt);
  const header = await readGgufHeader(path);
  const tokens = header.metadata.get('tokenizer.ggml.tokens')!.value as string[];
  assert.equal(logProbs.length, tokens.length);
  let total = 0;
  for (const lp of logProbs) {
    assert.ok(!Number.isNaN(lp) && lp <= 1e-6, `log-probability ${lp}`);
    total += Math.exp(lp);
  }
  assert.ok(Math.abs(total - 1) < 1e-3, `probabilities sum to ${total}`);
  const top = Math.exp(logProbs[argmax(logProbs)]);
  // Peaked (far above uniform 1/vocab) but not a certainty.
  assert.ok(top > 0.05 && top < 0.9999, `top probability ${top}`);

  const first = await greedy(path, prompt, 8);
  assert.equal(first[0], argmax(logProbs), 'greedy picks the most probable token');
  assert.deepEqual(await greedy(path, prompt, 8), first, 'greedy decoding is deterministic');
  assert.ok(new Set(first).size >= 2, `greedy output is not a single repeated token: ${first}`);
  return logProbs;
}

describe('test models: llama.cpp runs every architecture and weight type', function () {
  this.timeout(180000);
  after(disposeLlamaCppReference);

  describe('real vocabularies, F32', () => {
    for (const options of [
      { arch: 'llama', vocab: 'llama-bpe' },
      { arch: 'qwen2', vocab: 'qwen2' },
      { arch: 'qwen3', vocab: 'qwen2' },
    ] as TestModelOptions[]) {
      it(`${options.arch} with the ${options.vocab} vocabulary`, async () => {
        await checkModel(options);
      });
    }
  });

  // The smallest real vocabulary (Llama 2's 32K) keeps the weight-type matrix fast; the
  // vocabulary plays no part in how weights are stored.
  const MATRIX: Array<[TestModelOptions['arch'], TestWeightType[]]> = [
    ['llama', ['F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_K', 'Q5_K', 'Q6_K']],
    ['qwen2', ['F16', 'Q8_0', 'Q4_K']],
    ['qwen3', ['F16', 'Q8_0', 'Q4_K']],
  ];
  for (const [arch, types] of MATRIX) {
    for (const weightType of types) {
      it(`${arch} ${weightType}: stored as asked, runs in llama.cpp`, async () => {
        const options: TestModelOptions = { arch, vocab: 'llama-spm', weightType };
        await checkModel(options);
        const header = await readGgufHeader(await buildTestModel(options));
        const resolved = resolveTestModelOptions(options);
        for (const tensor of header.tensors) assert.equal(tensor.type, storedType(tensor, weightType), tensor.name);
        // ffn_down's rows (feedForwardLength 256) fill blocks of every type, so each file uses its type.
        assert.ok(header.tensors.some((t) => t.type === storedType({ dims: [resolved.feedForwardLength, 2] }, weightType) && t.type !== 0));
      });
    }
  }

  it('K-quant sizes (d=256) quantise every matrix', async () => {
    const options: TestModelOptions = { arch: 'qwen3', vocab: 'llama-spm', weightType: 'Q4_K', embeddingLength: 256, headCount: 4, headDim: 64 };
    await checkModel(options);
    const header = await readGgufHeader(await buildTestModel(options));
    for (const tensor of header.tensors) assert.equal(tensor.type, tensor.dims.length === 2 ? 12 : 0, tensor.name);
  });

  it('svc reads back the configuration that was asked for', async () => {
    const cases: Array<[TestModelOptions, Record<string, unknown>]> = [
      [
        { arch: 'llama', vocab: 'llama-spm' },
        { architecture: 'llama', ropeStyle: 'normal', attentionBias: false, qkNorm: false, tiedOutput: false, ropeFreqFactors: false, headDim: 8 },
      ],
      [
        { arch: 'qwen2', vocab: 'llama-spm' },
        { architecture: 'qwen2', ropeStyle: 'neox', attentionBias: true, qkNorm: false, tiedOutput: false },
      ],
      [
        { arch: 'qwen3', vocab: 'llama-spm', headDim: 16 },
        { architecture: 'qwen3', ropeStyle: 'neox', attentionBias: false, qkNorm: true, tiedOutput: true, headDim: 16 },
      ],
      [
        { arch: 'llama', vocab: 'llama-spm', tiedOutput: true, ropeFreqFactors: true },
        { tiedOutput: true, ropeFreqFactors: true },
      ],
    ];
    for (const [options, expected] of cases) {
      const header = await readGgufHeader(await buildTestModel(options));
      const config = configFromMetadata(
        header.metadata,
        header.tensors.map((t) => t.name),
      );
      const resolved = resolveTestModelOptions(options);
      assert.equal(config.vocabSize, 32000);
      assert.equal(config.embeddingLength, resolved.embeddingLength);
      assert.equal(config.headCountKv, resolved.headCountKv);
      assert.equal(config.contextLength, resolved.contextLength);
      for (const [key, value] of Object.entries(expected)) assert.equal(config[key as keyof typeof config], value, `${options.arch} ${key}`);
    }
  });

  it('llama with tied output and with Llama 3 rope_freqs runs; the frequency factors change the result', async () => {
    const plain = await checkModel({ arch: 'llama', vocab: 'llama-bpe' });
    await checkModel({ arch: 'llama', vocab: 'llama-bpe', ropeFreqFactors: true });
    await checkModel({ arch: 'llama', vocab: 'llama-bpe', tiedOutput: true });
    // Llama 3.1's factors only slow long wavelengths, invisible in a short prompt; explicit factors
    // on the fast dimensions show llama.cpp applies the tensor. Same seed, same weights otherwise.
    const withFactors = await checkModel({ arch: 'llama', vocab: 'llama-bpe', ropeFreqFactors: [2, 3, 5, 8] });
    let maxDiff = 0;
    for (let i = 0; i < plain.length; i++) {
      if (Number.isFinite(plain[i]) && Number.isFinite(withFactors[i])) maxDiff = Math.max(maxDiff, Math.abs(plain[i] - withFactors[i]));
    }
    assert.ok(maxDiff > 1e-3, `rope_freqs changed log-probabilities by only ${maxDiff}`);
  });

  it('the default chat templates are the real ones for the vocabulary', async () => {
    const template = async (options: TestModelOptions) =>
      (await readGgufHeader(await buildTestModel(options))).metadata.get('tokenizer.chat_template')?.value as string | undefined;
    assert.match((await template({ arch: 'llama', vocab: 'llama-bpe' }))!, /<\|start_header_id\|>/);
    assert.match((await template({ arch: 'qwen3', vocab: 'qwen2' }))!, /<think>/);
    assert.match((await template({ arch: 'qwen2', vocab: 'qwen2' }))!, /<\|im_start\|>/);
    assert.equal(await template({ arch: 'qwen2', vocab: 'qwen2', chatTemplate: null }), undefined);
    assert.equal(await template({ arch: 'llama', vocab: 'llama-spm', chatTemplate: '{{ x }}' }), '{{ x }}');
  });
});
