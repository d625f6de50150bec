/**
 * Fixtures for inputs svc must handle: an architecture llama.cpp serves but svc does not train,
 * truncated files, a model without a chat template, and a LoRA adapter for the reference's
 * greedy(…, {lora}). Each fixture is checked to be what it claims, with llama.cpp and svc's reader.
 */
import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { configFromMetadata, UnsupportedArchitectureError } from '../../../engine/gguf/model-config.js';
import { readGgufFile, readGgufHeader } from '../../../engine/gguf/reader.js';
import { buildUnsupportedArchModel, truncatedCopy, withoutChatTemplate } from '../../support/badModels.js';
import { disposeLlamaCppReference, greedy, logProbabilities, referenceModel, tokenize } from '../../support/llamaCppReference.js';
import { buildTestAdapter } from '../../support/testAdapters.js';
import { buildTestModel, type TestModelOptions } from '../../support/testModels.js';

describe('test models: fixtures for bad and special inputs', function () {
  this.timeout(120000);
  after(disposeLlamaCppReference);

  it('buildUnsupportedArchModel: a phi3 file llama.cpp serves and svc refuses to train', async () => {
    const path = await buildUnsupportedArchModel();
    const header = await readGgufHeader(path);
    assert.equal(header.metadata.get('general.architecture')?.value, 'phi3');
    assert.throws(
      () =>
        configFromMetadata(
          header.metadata,
          header.tensors.map((t) => t.name),
        ),
      UnsupportedArchitectureError,
    );
    const tokens = await greedy(path, await tokenize(path, 'Hello world'), 4);
    assert.equal(tokens.length, 4);
  });

  it('truncatedCopy: svc and llama.cpp reject a model cut inside its header or its data', async () => {
    const source = await buildTestModel({ arch: 'llama', vocab: 'llama-spm' });
    const size = (await stat(source)).size;
    const header = await readGgufHeader(source);
    const insideData = await truncatedCopy(source, -1000);
    const insideHeader = await truncatedCopy(source, Math.floor(header.dataOffset / 2));
    assert.equal((await stat(insideData)).size, size - 1000);
    await assert.rejects(readGgufFile(insideData), /truncated/);
    await assert.rejects(readGgufHeader(insideHeader), /truncated/);
    await assert.rejects(referenceModel(insideData));
    await assert.rejects(referenceModel(insideHeader));
  });

  it('withoutChatTemplate: same model and weights, no tokenizer.chat_template', async () => {
    const source = await buildTestModel({ arch: 'qwen3', vocab: 'qwen2', weightType: 'Q8_0' });
    const stripped = await withoutChatTemplate(source);
    const before = await readGgufHeader(source);
    const after = await readGgufHeader(stripped);
    assert.ok(before.metadata.has('tokenizer.chat_template'));
    assert.ok(!after.metadata.has('tokenizer.chat_template'));
    assert.equal(after.metadata.size, before.metadata.size - 1);
    assert.deepEqual(
      after.tensors.map((t) => [t.name, t.type, t.dims]),
      before.tensors.map((t) => [t.name, t.type, t.dims]),
    );
    const prompt = await tokenize(source, 'Hello world');
    assert.deepEqual(await logProbabilities(stripped, prompt), await logProbabilities(source, prompt));
    await assert.rejects(withoutChatTemplate(stripped), /no tokenizer.chat_template/);
  });

  it('buildTestAdapter: llama.cpp applies a random LoRA adapter, deterministically', async () => {
    for (const options of [
      { arch: 'llama', vocab: 'llama-spm' },
      { arch: 'qwen2', vocab: 'llama-spm' },
      { arch: 'qwen3', vocab: 'llama-spm' },
    ] as TestModelOptions[]) {
      const model = await buildTestModel(options);
      const adapter = await buildTestAdapter(options);
      const prompt = await tokenize(model, 'Once upon a time');
      const base = await greedy(model, prompt, 8);
      const adapted = await greedy(model, prompt, 8, { lora: adapter });
      assert.notDeepEqual(adapted, base, `${options.arch}: the adapter changes the output`);
      assert.deepEqual(await greedy(model, prompt, 8, { lora: adapter }), adapted);
      assert.deepEqual(await greedy(model, prompt, 8), base, `${options.arch}: the base context is unaffected`);
    }
  });
});
