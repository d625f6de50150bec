/**
 * The OpenAI controls llama.cpp honours for serving (engine/infer/generation-controls.ts), each
 * with an observable effect on the shipped svc-tiny model: unseeded sampling varies, log
 * probabilities describe the distribution the greedy choice came from, penalties and logit bias
 * change what is chosen, and grammars force JSON (matching a schema) at temperature 1.5.
 */
import assert from 'node:assert/strict';
import { InvalidGenerationRequest } from '../../../engine/infer/generation-controls.js';
import { loadLlamaCppModel, type LlamaCppModel, type LlamaCppSession } from '../../../engine/infer/llama-cpp.js';
import path from 'node:path';
import { packageRoot } from '../../../sdk/packageRoot.js';

const SVC_TINY_MODEL_PATH = path.join(packageRoot(), 'models', 'svc-tiny.gguf');
const messages = [{ role: 'user' as const, content: 'Tell me about cats.' }];
const repeats = (tokens: number[]) => tokens.length - new Set(tokens).size;

describe('engine/infer: generation controls on llama.cpp', function () {
  this.timeout(120_000);
  let model: LlamaCppModel;
  let session: LlamaCppSession;

  before(async () => {
    model = await loadLlamaCppModel({ modelPath: SVC_TINY_MODEL_PATH, threads: 1 });
    session = await model.createSession();
  });
  after(async () => {
    await session?.dispose();
    await model?.dispose();
  });

  it('samples differently without a seed and identically with one', async () => {
    const request = { messages, maxTokens: 40, temperature: 1.5 };
    const unseeded = await Promise.all([1, 2, 3, 4, 5].map(() => session.generate(request)));
    assert.ok(new Set(unseeded.map((r) => r.text)).size > 1, `five unseeded samples were all ${JSON.stringify(unseeded[0].text)}`);
    const [a, b] = [await session.generate({ ...request, seed: 11 }), await session.generate({ ...request, seed: 11 })];
    assert.deepEqual(a.tokens, b.tokens);
  });

  it('reports log probabilities: the greedy token is the most likely one, alternatives sorted, texts match', async () => {
    const chunks: Array<{ text: string; count: number }> = [];
    const result = await session.generate({
      messages,
      maxTokens: 12,
      topLogprobs: 3,
      onTextChunk: (text, lp) => chunks.push({ text, count: lp?.length ?? 0 }),
    });
    const logprobs = result.logprobs!;
    assert.equal(logprobs.length, result.tokens.length);
    for (const entry of logprobs) {
      assert.equal(entry.topLogprobs.length, 3);
      assert.deepEqual(entry.topLogprobs[0], { token: entry.token, bytes: entry.bytes, logprob: entry.logprob });
      assert.ok(entry.logprob <= 0);
      const probs = entry.topLogprobs.map((t) => Math.exp(t.logprob));
      assert.ok(probs[0] >= probs[1] && probs[1] >= probs[2] && probs.reduce((x, y) => x + y) <= 1 + 1e-6);
    }
    assert.equal(logprobs.map((e) => e.token).join(''), result.text);
    // Every token's entry reaches the streaming callback with the text it decoded to.
    assert.equal(
      chunks.reduce((n, c) => n + c.count, 0),
      logprobs.length,
    );
    const plain = await session.generate({ messages, maxTokens: 12 });
    assert.equal(plain.logprobs, undefined);
  });

  it('frequency and presence penalties lower repeated tokens', async () => {
    const plain = await session.generate({ messages, maxTokens: 60, topLogprobs: 0 });
    const penalised = await session.generate({ messages, maxTokens: 60, frequencyPenalty: 2 });
    assert.ok(repeats(penalised.tokens) < repeats(plain.tokens), `repeats ${repeats(penalised.tokens)} vs ${repeats(plain.tokens)}`);
    // Presence lowers the probability of every token seen before, even where the choice stays.
    const present = await session.generate({ messages, maxTokens: 60, presencePenalty: 2, topLogprobs: 0 });
    const seenBefore = (tokens: number[], i: number) => tokens.slice(0, i).includes(tokens[i]);
    const i = plain.tokens.findIndex(
      (t, k) => seenBefore(plain.tokens, k) && present.tokens[k] === t && present.tokens.slice(0, k).join() === plain.tokens.slice(0, k).join(),
    );
    assert.ok(i > 0, 'no repeated token to compare');
    assert.ok(present.logprobs![i].logprob < plain.logprobs![i].logprob - 1e-3, `${present.logprobs![i].logprob} vs ${plain.logprobs![i].logprob}`);
  });

  it('logit bias bans (-100) and forces (+100) tokens, and refuses ids outside the vocabulary', async () => {
    const plain = await session.generate({ messages, maxTokens: 8 });
    const banned = await session.generate({ messages, maxTokens: 8, logitBias: { [plain.tokens[0]]: -100 } });
    assert.notEqual(banned.tokens[0], plain.tokens[0]);
    assert.ok(!banned.tokens.includes(plain.tokens[0]));
    const forced = await session.generate({ messages, maxTokens: 8, logitBias: { 120: 100 } });
    assert.deepEqual(forced.tokens, Array(8).fill(120));
    await assert.rejects(
      session.generate({ messages, logitBias: { 999999: 5 } }),
      (e: unknown) => e instanceof InvalidGenerationRequest && e.param === 'logit_bias',
    );
  });

  it('a JSON grammar makes every sampled answer parse, and a schema with an enum is always matched', async () => {
    const schema = { type: 'object', properties: { color: { enum: ['red', 'green', 'blue'] }, size: { type: 'integer' } }, required: ['color', 'size'] };
    for (let seed = 1; seed <= 10; seed++) {
      const any = await session.generate({ messages, maxTokens: 120, temperature: 1.5, seed, output: { type: 'json' } });
      if (any.finishReason === 'stop') assert.equal(typeof JSON.parse(any.text), 'object', any.text);
      const typed = await session.generate({ messages, maxTokens: 120, temperature: 1.5, seed, output: { type: 'json_schema', schema } });
      assert.equal(typed.finishReason, 'stop');
      assert.equal(typed.text, typed.text.trimEnd(), 'trailing whitespace is trimmed');
      const value = JSON.parse(typed.text);
      assert.ok(['red', 'green', 'blue'].includes(value.color) && Number.isInteger(value.size), typed.text);
    }
    await assert.rejects(
      session.generate({ messages, output: { type: 'json_schema', schema: { type: 'object', properties: { x: { type: 'frobnicate' } } } } }),
      (e: unknown) => e instanceof InvalidGenerationRequest && e.param === 'response_format',
    );
  });
});
