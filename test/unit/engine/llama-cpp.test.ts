/**
 * The exported GGUF must behave in llama.cpp exactly like the tfjs model it came from: greedy
 * decoding is compared token for token, with and without a LoRA adapter.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { initTf } from '../../../engine/backend.js';
import { loadAdapterGguf } from '../../../engine/gguf/adapter-file.js';
import { saveModelGguf } from '../../../engine/gguf/model-file.js';
import { promptTokens } from '../../../engine/infer/chat-template.js';
import { loadLlamaCppModel, streamGenerate, type LlamaCppModel, type LlamaCppSession } from '../../../engine/infer/llama-cpp.js';
import { generateGreedyTfjs } from '../../../engine/infer/tfjs-generate.js';
import type { LoraAdapter } from '../../../engine/lora.js';
import { disposeWeights, type ModelWeights } from '../../../engine/model/weights.js';
import type { ModelConfig } from '../../../engine/model/config.js';
import { trainLora } from '../../../engine/train/lora-trainer.js';
import type { ChatMessage } from '../../../engine/tokenizer.js';
import { toyQuackChats, trainToyModel } from '../../fixtures/engine/tiny-model.js';

const PROMPTS: ChatMessage[][] = ['cow', 'dog', 'owl', 'zebra', 'hello there'].map((content) => [{ role: 'user', content }]);

describe('engine/infer: llama.cpp matches the tfjs reference', function () {
  this.timeout(120000);
  let dir: string;
  let config: ModelConfig;
  let weights: ModelWeights;
  let adapter: LoraAdapter;
  let adapterPath: string;
  let model: LlamaCppModel;
  let baseSession: LlamaCppSession;
  let adaptedSession: LlamaCppSession;

  before(async () => {
    await initTf();
    dir = await mkdtemp(join(tmpdir(), 'svc-llama-test-'));
    ({ config, weights } = await trainToyModel(80));
    await saveModelGguf(join(dir, 'base.gguf'), config, weights);
    const result = await trainLora({
      baseModel: { config, weights },
      train: toyQuackChats(),
      outputDir: join(dir, 'run'),
      lora: { r: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] },
      maxSteps: 30,
      learningRate: 2e-2,
      batchSize: 3,
      seed: 2,
    });
    adapterPath = result.artifacts.at(-1)!.path;
    adapter = await loadAdapterGguf(adapterPath, config);
    model = await loadLlamaCppModel({ modelPath: join(dir, 'base.gguf'), threads: 1 });
    baseSession = await model.createSession();
    adaptedSession = await model.createSession({ adapters: [{ path: adapterPath }] });
  });

  after(async () => {
    await baseSession?.dispose();
    await adaptedSession?.dispose();
    await model?.dispose();
    if (weights) disposeWeights(weights);
    if (adapter) disposeWeights(adapter.weights);
    await rm(dir, { recursive: true, force: true });
  });

  const maxTokens = (messages: ChatMessage[]) => config.contextLength - promptTokens(messages).length;

  it('greedy decoding of the base model is identical token for token', async () => {
    for (const messages of PROMPTS) {
      const expected = await generateGreedyTfjs(config, weights, promptTokens(messages), { maxTokens: maxTokens(messages) });
      const actual = await baseSession.generate({ messages, maxTokens: maxTokens(messages) });
      assert.deepEqual(actual.tokens, expected, `prompt ${JSON.stringify(messages)}`);
      assert.equal(actual.usage.promptTokens, promptTokens(messages).length);
      assert.equal(actual.usage.completionTokens, expected.length);
    }
  });

  it('greedy decoding with the LoRA adapter is identical, and differs from the base', async () => {
    let differs = false;
    for (const messages of PROMPTS) {
      const expected = await generateGreedyTfjs(config, weights, promptTokens(messages), { maxTokens: maxTokens(messages), lora: adapter });
      const actual = await adaptedSession.generate({ messages, maxTokens: maxTokens(messages) });
      assert.deepEqual(actual.tokens, expected, `prompt ${JSON.stringify(messages)}`);
      const base = await baseSession.generate({ messages, maxTokens: maxTokens(messages) });
      if (base.text !== actual.text) differs = true;
    }
    assert.ok(differs, 'the adapter changed no output: it is probably not applied');
    const cow = await adaptedSession.generate({ messages: PROMPTS[0], maxTokens: 20 });
    assert.match(cow.text, /^quack/, 'the adapter taught every animal to quack');
    assert.equal(cow.finishReason, 'stop');
  });

  it('renders chats through the GGUF chat template exactly like the engine renderer', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'cow' },
      { role: 'assistant', content: 'moo' },
      { role: 'user', content: 'café?' },
    ];
    assert.equal(model.usesSvcTemplate, true);
    assert.deepEqual(model.templatePromptTokens(messages), promptTokens(messages));
  });

  it('streams chunks, honours stop strings and max tokens', async () => {
    const chunks: string[] = [];
    const stream = streamGenerate(adaptedSession, { messages: PROMPTS[1], maxTokens: 20 });
    let next = await stream.next();
    while (!next.done) {
      chunks.push(next.value);
      next = await stream.next();
    }
    assert.equal(chunks.join(''), next.value.text);
    assert.ok(chunks.length > 1);

    // Expectations derive from the unconstrained output, so they hold whatever the toy model says.
    const full = await adaptedSession.generate({ messages: PROMPTS[1], maxTokens: 20 });
    assert.ok(full.text.length >= 5, `need a longer reply than ${JSON.stringify(full.text)}`);
    const stop = full.text.slice(3, 5);
    const stopped = await adaptedSession.generate({ messages: PROMPTS[1], maxTokens: 20, stop: [stop, 'never'] });
    assert.equal(stopped.text, full.text.slice(0, full.text.indexOf(stop)));
    assert.equal(stopped.finishReason, 'stop');

    const short = await adaptedSession.generate({ messages: PROMPTS[1], maxTokens: 3 });
    assert.equal(short.text, full.text.slice(0, 3));
    assert.equal(short.finishReason, 'length');
    assert.equal(short.usage.completionTokens, 3);
  });

  it('samples reproducibly for a seed', async () => {
    const request = { messages: PROMPTS[3], maxTokens: 12, temperature: 1.5, topP: 0.95 };
    const a = await baseSession.generate({ ...request, seed: 7 });
    const b = await baseSession.generate({ ...request, seed: 7 });
    assert.deepEqual(a.tokens, b.tokens);
    const others = await Promise.all([1, 2, 3, 4].map((seed) => baseSession.generate({ ...request, seed })));
    assert.ok(
      others.some((o) => o.text !== a.text),
      'different seeds never changed the sample',
    );
  });
});
