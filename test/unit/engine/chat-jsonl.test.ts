import assert from 'node:assert/strict';
import { DatasetValidationError, parseChatJsonl, tokenizeExamples, validateChatJsonl } from '../../../engine/data/chat-jsonl.js';

const good = (user: string, assistant: string) =>
  JSON.stringify({
    messages: [
      { role: 'user', content: user },
      { role: 'assistant', content: assistant },
    ],
  });

describe('engine/data/chat-jsonl', () => {
  it('parses valid lines, skipping blank ones, and keeps line numbers', () => {
    const examples = parseChatJsonl([good('a', 'b'), '', good('c', 'd'), ''].join('\n'));
    assert.deepEqual(
      examples.map((e) => e.line),
      [1, 3],
    );
    assert.deepEqual(examples[1].messages, [
      { role: 'user', content: 'c' },
      { role: 'assistant', content: 'd' },
    ]);
  });

  it('reports every invalid line with its number and reason', () => {
    const text = [
      good('ok', 'ok'),
      '{not json',
      JSON.stringify({ messages: [{ role: 'user', content: 'no answer' }] }),
      JSON.stringify({ prompt: 'x' }),
      JSON.stringify({
        messages: [
          { role: 'tool', content: 'x' },
          { role: 'assistant', content: 'y' },
        ],
      }),
      JSON.stringify({
        messages: [
          { role: 'user', content: 3 },
          { role: 'assistant', content: 'y' },
        ],
      }),
    ].join('\n');
    const { issues } = validateChatJsonl(text);
    assert.deepEqual(
      issues.map((i) => i.line),
      [2, 3, 4, 5, 6],
    );
    assert.equal(issues[0].message, 'not valid JSON');
    assert.equal(issues[1].message, 'messages must contain an assistant message');
    assert.match(issues[2].message, /messages/);
    assert.match(issues[3].message, /role/);
    assert.match(issues[4].message, /content must be a string/);
    assert.throws(
      () => parseChatJsonl(text, { name: 'train.jsonl' }),
      (error: unknown) => {
        assert.ok(error instanceof DatasetValidationError);
        assert.match(error.message, /train\.jsonl has 5 invalid lines/);
        assert.match(error.message, /line 2: not valid JSON/);
        return true;
      },
    );
  });

  it('rejects an empty dataset with a clear message', () => {
    assert.throws(() => parseChatJsonl('\n\n', { name: 'eval.jsonl' }), /eval\.jsonl: dataset is empty/);
  });

  it('rejects conversations longer than the context by default, or truncates on request', () => {
    const long = good('q', 'x'.repeat(50));
    assert.throws(() => parseChatJsonl(long, { contextLength: 32 }), /line 1: conversation is 56 tokens, longer than the model's context of 32/);
    const [example] = parseChatJsonl(long);
    const [cut] = tokenizeExamples([example], 32, 'truncate');
    assert.equal(cut.ids.length, 32);
    assert.ok(cut.lossMask.includes(1));
  });
});
