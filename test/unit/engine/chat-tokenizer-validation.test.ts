/**
 * Dataset validation and tokenisation with a real model's ChatTokenizer: token counts are the
 * GGUF's own (llama.cpp's Qwen2 vocabulary GGUF, which carries Qwen2's ChatML template), issues
 * keep their line numbers, and the SDK's report passes the options through.
 */
import assert from 'node:assert/strict';
import type { ChatTokenizer } from '../../../engine/data/chat-tokenizer.js';
import { byteChatTokenizer } from '../../../engine/data/chat-tokenizer.js';
import { defaultMaxSeqLength, tokenizeExamples, validateChatJsonl } from '../../../engine/data/chat-jsonl.js';
import { loadGgufChatTokenizer } from '../../../engine/data/gguf-chat-tokenizer.js';
import { validateChatJsonl as sdkValidateChatJsonl } from '../../../sdk/jsonl.js';
import type { ChatMessage } from '../../../engine/tokenizer.js';
import { vocabGguf } from '../../support/llamaCppSource.js';

const chat = (user: string, assistant: string): ChatMessage[] => [
  { role: 'user', content: user },
  { role: 'assistant', content: assistant },
];
const line = (messages: ChatMessage[]) => JSON.stringify({ messages });

describe('engine/data/chat-jsonl with a real GGUF tokenizer', function () {
  this.timeout(60000);
  let qwen: ChatTokenizer;
  const long = chat('Tell me a story.', 'Once upon a time there was a small robot. '.repeat(20));
  const text = [line(chat('hi', 'hello')), line(long), '{not json', '', line(chat('2+2?', '4'))].join('\n');

  before(async () => {
    qwen = await loadGgufChatTokenizer(vocabGguf('qwen2'));
  });
  after(async () => {
    await qwen?.dispose();
  });

  it('counts tokens with the model tokenizer and names the count and the limit, by line', () => {
    const tokens = qwen.renderChat(long).ids.length;
    assert.ok(tokens > 64 && tokens < 400, `${tokens} BPE tokens, far fewer than its ${JSON.stringify(long).length} bytes`);
    const { examples, issues } = validateChatJsonl(text, { tokenizer: qwen, maxSeqLength: 64 });
    assert.deepEqual(issues, [
      { line: 2, message: `conversation is ${tokens} tokens, longer than maxSeqLength of 64 tokens` },
      { line: 3, message: 'not valid JSON' },
    ]);
    assert.deepEqual(
      examples.map((e) => e.line),
      [1, 5],
    );
    // The same file passes with a limit above its longest conversation.
    assert.deepEqual(validateChatJsonl(text, { tokenizer: qwen, maxSeqLength: tokens }).issues, [{ line: 3, message: 'not valid JSON' }]);
  });

  it('the SDK report passes tokenizer and maxSeqLength through', () => {
    const report = sdkValidateChatJsonl(text, { tokenizer: qwen, maxSeqLength: 64 });
    assert.equal(report.exampleCount, 2);
    assert.match(report.errors[0], /^line 2: conversation is \d+ tokens, longer than maxSeqLength of 64 tokens$/);
    // Without a tokenizer the byte tokenizer counts (bytes), so the same limit finds more tokens.
    const bytes = sdkValidateChatJsonl(text, { contextLength: 64 });
    assert.match(bytes.errors[0], /^line 2: conversation is \d+ tokens, longer than the model's context of 64 tokens \(1 token = 1 byte\)$/);
  });

  it('reports a template that refuses a conversation as an issue on its line', async () => {
    const strict = await loadGgufChatTokenizer(vocabGguf('qwen2'), {
      chatTemplate:
        "{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}",
    });
    try {
      const withSystem = line([{ role: 'system', content: 'x' }, ...chat('a', 'b')]);
      const { issues } = validateChatJsonl([line(chat('a', 'b')), withSystem].join('\n'), { tokenizer: strict });
      assert.deepEqual(issues, [{ line: 2, message: 'chat template: System role not supported' }]);
    } finally {
      await strict.dispose();
    }
  });

  it('tokenizeExamples renders with the given tokenizer', () => {
    const examples = [
      { line: 1, messages: chat('hi', 'hello') },
      { line: 7, messages: long },
    ];
    const out = tokenizeExamples(examples, 1024, 'reject', qwen);
    assert.deepEqual(
      out,
      examples.map((e) => qwen.renderChat(e.messages)),
    );
    assert.throws(() => tokenizeExamples(examples, 64, 'reject', qwen), /line 7: conversation is \d+ tokens, longer than the limit of 64 tokens/);
    const [, cut] = tokenizeExamples(examples, 64, 'truncate', qwen);
    assert.equal(cut.ids.length, 64);
  });

  it('defaults maxSeqLength to min(context, 1024) for real models, the context for svc-tiny', () => {
    assert.equal(defaultMaxSeqLength(qwen, 32768), 1024);
    assert.equal(defaultMaxSeqLength(qwen, 512), 512);
    assert.equal(defaultMaxSeqLength(byteChatTokenizer, 160), 160);
  });
});
