/**
 * The test models carry real vocabularies: llama.cpp, loading a model built by buildTestModel,
 * tokenizes every case of llama.cpp's own tokenizer vectors (models/ggml-vocab-NAME.gguf.inp /
 * .out, the format of tests/test-tokenizer-0.cpp) exactly as recorded for the real model. This
 * checks that every tokenizer.* key was copied intact, and the reference helper's tokenize().
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { disposeLlamaCppReference, tokenize } from '../../support/llamaCppReference.js';
import { vocabGguf } from '../../support/llamaCppSource.js';
import { buildTestModel, type TestArch } from '../../support/testModels.js';

/** Cases of test-tokenizer-0: inputs split on "\n__ggml_vocab_test__\n", one output line each. */
function tokenizerCases(vocab: string): Array<{ text: string; tokens: number[] }> {
  const raw = readFileSync(`${vocabGguf(vocab)}.inp`, 'utf8');
  const inputs: string[] = [];
  const sep = '\n__ggml_vocab_test__\n';
  for (let pos = 0; pos < raw.length; ) {
    const next = raw.indexOf(sep, pos);
    if (next < 0) {
      inputs.push(raw.slice(pos));
      break;
    }
    inputs.push(raw.slice(pos, next));
    pos = next + sep.length;
  }
  const outputs = readFileSync(`${vocabGguf(vocab)}.out`, 'utf8').split('\n');
  if (outputs.at(-1) === '') outputs.pop(); // getline does not yield the part after the last newline
  assert.equal(inputs.length, outputs.length, `${vocab}: .inp and .out disagree on the number of cases`);
  return inputs.map((text, i) => ({ text, tokens: outputs[i].trim() ? outputs[i].trim().split(' ').map(Number) : [] }));
}

const VOCABS: Array<{ vocab: string; arch: TestArch }> = [
  { vocab: 'llama-bpe', arch: 'llama' },
  { vocab: 'llama-spm', arch: 'llama' },
  { vocab: 'qwen2', arch: 'qwen2' },
];

describe('test models: llama.cpp tokenizes their real vocabularies like the real models', function () {
  this.timeout(120000);
  after(disposeLlamaCppReference);

  for (const { vocab, arch } of VOCABS) {
    it(`${vocab} (${arch}): every case of ggml-vocab-${vocab}.gguf.inp gives its .out tokens`, async () => {
      const model = await buildTestModel({ arch, vocab });
      const cases = tokenizerCases(vocab);
      assert.ok(cases.length > 20, `only ${cases.length} cases`);
      for (const { text, tokens } of cases) {
        assert.deepEqual(await tokenize(model, text), tokens, `text ${JSON.stringify(text)}`);
      }
    });
  }

  it('parses special tokens only when asked', async () => {
    const model = await buildTestModel({ arch: 'qwen3', vocab: 'qwen2' });
    const special = await tokenize(model, '<|im_start|>user', { special: true });
    const plain = await tokenize(model, '<|im_start|>user', { special: false });
    assert.equal(special.length, 2, `special: ${special}`);
    assert.ok(plain.length > 2, `plain: ${plain}`);
  });
});
