/**
 * The grammars behind tool calls on llama.cpp (engine/infer/generation-controls.ts, used by
 * cloud/inference/tools.ts), on the shipped svc-tiny model at temperature 1.5: "text or marker +
 * call" always yields one of the two, whichever branch the first token takes; and `anyOf`
 * reaches the grammar compiler as an alternation instead of the `null` it made of it.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { grammarReadySchema } from '../../../engine/infer/json-schema-support.js';
import { loadLlamaCppModel, type LlamaCppModel, type LlamaCppSession } from '../../../engine/infer/llama-cpp.js';
import { packageRoot } from '../../../sdk/packageRoot.js';

const SVC_TINY_MODEL_PATH = path.join(packageRoot(), 'models', 'svc-tiny.gguf');
const messages = [{ role: 'user' as const, content: 'Weather in Paris?' }];
const CITIES = ['Paris', 'Rome'];
const callSchema = {
  type: 'object',
  properties: {
    name: { const: 'get_weather' },
    arguments: { type: 'object', properties: { city: { enum: CITIES } }, required: ['city'], additionalProperties: false },
  },
  required: ['name', 'arguments'],
  additionalProperties: false,
};
const MARKER = '<tool_call>';
/** svc models spell bytes as their own ids: "<" is token 60. */
const LESS_THAN = '60';

describe('engine/infer: tool-call grammars on llama.cpp', function () {
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

  const sample = (bias?: number) =>
    session.generate({
      messages,
      maxTokens: 100,
      temperature: 1.5,
      output: { type: 'text_or_json_schema', schema: callSchema, marker: MARKER },
      ...(bias === undefined ? {} : { logitBias: { [LESS_THAN]: bias } }),
    });

  const assertCall = (text: string) => {
    assert.ok(text.startsWith(MARKER), text);
    const call = JSON.parse(text.slice(MARKER.length));
    assert.equal(call.name, 'get_weather');
    assert.ok(CITIES.includes(call.arguments.city), text);
  };

  it('text or a call: a first "<" commits to the marker and a schema-valid call', async () => {
    for (let i = 0; i < 8; i++) assertCall((await sample(20)).text);
  });

  it('text or a call: without the marker it is plain text', async () => {
    for (let i = 0; i < 5; i++) {
      const { text } = await sample(-100);
      assert.ok(text.length > 0 && !text.startsWith('<'), text);
    }
  });

  it('text or a call, left to the model: always one or the other', async () => {
    for (let i = 0; i < 8; i++) {
      const { text, finishReason } = await sample();
      if (text.startsWith('<') && finishReason === 'stop') assertCall(text);
      else assert.ok(!text.startsWith('<') || finishReason === 'length', text);
    }
  });

  it('anyOf is handed to the compiler as oneOf, only where a schema stands', async () => {
    const schema = { type: 'object', properties: { anyOf: { anyOf: [{ type: 'boolean' }, { enum: CITIES }] } }, required: ['anyOf'] };
    assert.deepEqual(grammarReadySchema(schema), {
      type: 'object',
      properties: { anyOf: { oneOf: [{ type: 'boolean' }, { enum: CITIES }] } },
      required: ['anyOf'],
    });
    for (let i = 0; i < 5; i++) {
      const { text } = await session.generate({ messages, maxTokens: 40, temperature: 1.5, output: { type: 'json_schema', schema } });
      const value = JSON.parse(text).anyOf;
      assert.ok(typeof value === 'boolean' || CITIES.includes(value), text);
    }
  });
});
