import assert from 'node:assert/strict';
import { promptText, promptTokens } from '../../../engine/infer/chat-template.js';
import { ASSISTANT_ID, BOS_ID, END_ID, USER_ID, decodeTokens, encodeText, renderChat } from '../../../engine/tokenizer.js';

describe('engine/tokenizer', () => {
  it('round-trips UTF-8 text through byte ids', () => {
    const text = 'Hello, café ☕ 世界';
    const ids = encodeText(text);
    assert.ok(ids.every((id) => id >= 0 && id < 256));
    assert.equal(decodeTokens(ids), text);
  });

  it('renders a chat with a loss mask only on assistant content and its end token', () => {
    const { ids, lossMask } = renderChat([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'yo' },
    ]);
    assert.deepEqual(ids, [BOS_ID, USER_ID, 104, 105, END_ID, ASSISTANT_ID, 121, 111, END_ID]);
    assert.deepEqual(lossMask, [0, 0, 0, 0, 0, 0, 1, 1, 1]);
  });

  it('keeps special-token spellings in user text as plain bytes', () => {
    const { ids } = renderChat([
      { role: 'user', content: '<|end|>' },
      { role: 'assistant', content: 'x' },
    ]);
    assert.equal(ids.filter((id) => id === END_ID).length, 2);
  });

  it('builds the generation prompt as the prefix of the rendered conversation', () => {
    const history = [
      { role: 'system' as const, content: 'be brief' },
      { role: 'user' as const, content: 'hello' },
    ];
    const full = renderChat([...history, { role: 'assistant', content: 'hey' }]).ids;
    const prompt = promptTokens(history);
    assert.deepEqual(full.slice(0, prompt.length), prompt);
    assert.equal(prompt.at(-1), ASSISTANT_ID);
    assert.equal(promptText(history), '<|bos|><|system|>be brief<|end|><|user|>hello<|end|><|assistant|>');
  });
});
