/**
 * Chat tokenisation for real GGUFs: llama.cpp's vocabulary-only GGUFs of Llama 3 and Qwen2/2.5/3
 * (and Llama 2's SPM one, which has no template, for the fallback), each written out with a real
 * chat template from llama.cpp's models/templates. Nothing here is mocked: tokens come from
 * llama.cpp, templates from their authors.
 *
 * The reference for every conversation is computed independently of engine/data: the template
 * rendered whole with @huggingface/jinja and tokenised whole by llama.cpp, BOS prepended when the
 * GGUF says add_bos_token (after dropping a leading bos text, as llama.cpp's server does).
 */
import assert from 'node:assert/strict';
import { Template } from '@huggingface/jinja';
import type { LlamaModel, Token } from 'node-llama-cpp';
import { byteChatTokenizer, type ChatTokenizer } from '../../../engine/data/chat-tokenizer.js';
import { loadGgufChatTokenizer } from '../../../engine/data/gguf-chat-tokenizer.js';
import { getLlamaRuntime } from '../../../engine/infer/llama-cpp.js';
import { renderChat, renderGenerationPrompt, type ChatMessage } from '../../../engine/tokenizer.js';
import { vocabGguf } from '../../support/llamaCppSource.js';
import { TEMPLATE_CASES, realTemplate, vocabWithTemplate } from '../../support/chatTemplates.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';

const ONE_TURN: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'What is 2+2?' },
  { role: 'assistant', content: 'Four.' },
];
const MULTI_TURN: ChatMessage[] = [
  { role: 'system', content: 'Answer in French.' },
  { role: 'user', content: 'Hello there' },
  { role: 'assistant', content: 'Bonjour.' },
  { role: 'user', content: 'And goodbye, café ☕?' },
  { role: 'assistant', content: 'Au revoir, café ☕.' },
];

/** Texts of the runs of masked tokens, detokenised with special tokens shown. */
function maskedRuns(model: LlamaModel, ids: readonly number[], mask: readonly number[]): string[] {
  const runs: number[][] = [];
  mask.forEach((m, i) => {
    if (!m) return;
    if (i === 0 || !mask[i - 1]) runs.push([]);
    runs[runs.length - 1].push(ids[i]);
  });
  return runs.map((run) => model.detokenize(run as Token[], true));
}

/** The independent reference: whole text rendered once, tokenised once by llama.cpp. */
function referenceIds(model: LlamaModel, template: string, messages: ChatMessage[], addGenerationPrompt: boolean): number[] {
  const bos = model.tokens.bosString ?? '';
  const text = new Template(template).render({
    messages,
    add_generation_prompt: addGenerationPrompt,
    bos_token: bos,
    eos_token: model.tokens.eosString ?? '',
    enable_thinking: false,
  });
  const addBos = model.fileInfo.metadata.tokenizer.ggml.add_bos_token === true;
  const body = addBos && text.startsWith(bos) ? text.slice(bos.length) : text;
  const ids = model.tokenize(body, true) as number[];
  return addBos ? [model.tokens.bos as number, ...ids] : ids;
}

describe('engine/data/chat-tokenizer: svc-tiny byte tokenizer', () => {
  it('is engine/tokenizer.ts unchanged', () => {
    assert.deepEqual(byteChatTokenizer.renderChat(MULTI_TURN), renderChat(MULTI_TURN));
    assert.deepEqual(byteChatTokenizer.renderGenerationPrompt(MULTI_TURN.slice(0, 4)), renderGenerationPrompt(MULTI_TURN.slice(0, 4)));
    assert.equal(byteChatTokenizer.templateSource, 'svc');
    assert.ok(byteChatTokenizer.padId < byteChatTokenizer.vocabSize);
  });
});

describe('engine/data/chat-tokenizer: real GGUF templates through llama.cpp', function () {
  this.timeout(120000);
  let dir: TempDir;
  before(async () => {
    dir = await createTempDir('chat-tokenizer');
  });
  after(async () => {
    await dir.remove();
  });

  for (const c of TEMPLATE_CASES) {
    describe(c.name, () => {
      let template: string;
      let tokenizer: ChatTokenizer;
      let model: LlamaModel;
      before(async () => {
        template = await realTemplate(c.template);
        const file = await vocabWithTemplate(dir.path, c.vocab, template);
        tokenizer = await loadGgufChatTokenizer(file);
        model = await (await getLlamaRuntime()).llama.loadModel({ modelPath: file, vocabOnly: true });
      });
      after(async () => {
        await tokenizer?.dispose();
        await model?.dispose();
      });

      it('reads the template from the GGUF and knows its end-of-turn tokens', () => {
        assert.equal(tokenizer.templateSource, 'gguf');
        assert.ok(tokenizer.eosIds.includes(model.tokenize(c.end, true)[0]), `${c.end} ends generation`);
        assert.ok(tokenizer.padId >= 0 && tokenizer.padId < tokenizer.vocabSize);
      });

      for (const [label, messages] of [
        ['one turn', ONE_TURN],
        ['multi-turn', MULTI_TURN],
      ] as const) {
        it(`${label}: ids equal llama.cpp's tokenisation of the whole rendered text`, () => {
          const { ids, lossMask } = tokenizer.renderChat(messages);
          assert.deepEqual(ids, referenceIds(model, template, messages, false));
          assert.equal(lossMask.length, ids.length);
          if (model.tokens.bos !== null && model.fileInfo.metadata.tokenizer.ggml.add_bos_token === true) {
            assert.equal(ids.filter((id) => id === model.tokens.bos).length, 1, 'exactly one BOS');
          }
        });
      }

      it('one turn: loss only on the assistant content and its end-of-turn token', () => {
        const { ids, lossMask } = tokenizer.renderChat(ONE_TURN);
        // Qwen3 in non-thinking mode: the empty <think></think> block is part of the prompt.
        const expected = `Four.${c.end}`;
        assert.deepEqual(maskedRuns(model, ids, lossMask), [expected]);
        // The mask starts right after the generation prompt serving would use.
        const prompt = tokenizer.renderGenerationPrompt(ONE_TURN.slice(0, 2));
        assert.deepEqual(ids.slice(0, prompt.length), prompt);
        assert.equal(lossMask.indexOf(1), prompt.length);
      });

      it('multi-turn: every assistant turn is trained, except earlier turns the template rewrites', () => {
        const { ids, lossMask } = tokenizer.renderChat(MULTI_TURN);
        const expected =
          c.template === 'Qwen-Qwen3-0.6B'
            ? // Qwen3 drops the <think> block from earlier turns: the first turn stays context only.
              [`Au revoir, café ☕.${c.end}`]
            : [`Bonjour.${c.end}`, `Au revoir, café ☕.${c.end}`];
        assert.deepEqual(maskedRuns(model, ids, lossMask), expected);
      });

      it("the generation prompt is llama.cpp's tokenisation of the rendered prompt", () => {
        const history = MULTI_TURN.slice(0, 4);
        assert.deepEqual(tokenizer.renderGenerationPrompt(history), referenceIds(model, template, history, true));
      });
    });
  }

  describe('Gemma 4 (its non-thinking generation prompt ends in an empty thought channel no rendered turn has)', () => {
    let tokenizer: ChatTokenizer;
    let model: LlamaModel;
    before(async () => {
      const file = await vocabWithTemplate(dir.path, 'gemma-4', await realTemplate('google-gemma-4-31B-it'));
      tokenizer = await loadGgufChatTokenizer(file);
      model = await (await getLlamaRuntime()).llama.loadModel({ modelPath: file, vocabOnly: true });
    });
    after(async () => {
      await tokenizer?.dispose();
      await model?.dispose();
    });

    for (const [label, messages] of [
      ['one turn', ONE_TURN],
      ['multi-turn', MULTI_TURN],
    ] as const) {
      it(`${label}: the last answer is trained after the very prompt serving uses, earlier turns are context`, () => {
        const { ids, lossMask } = tokenizer.renderChat(messages);
        const prompt = tokenizer.renderGenerationPrompt(messages.slice(0, -1));
        assert.match(model.detokenize(prompt as Token[], true), /<\|turn>model\n<\|channel>thought\n<channel\|>$/);
        assert.deepEqual(ids.slice(0, prompt.length), prompt);
        assert.equal(lossMask.indexOf(1), prompt.length);
        assert.deepEqual(maskedRuns(model, ids, lossMask), [`${messages.at(-1)!.content}<turn|>`]);
      });
    }
  });

  describe('a GGUF without a chat template', () => {
    it('falls back to ChatML and says so', async () => {
      // llama.cpp's Qwen2 vocab GGUF carries a template; this copy has none.
      const file = await vocabWithTemplate(dir.path, 'qwen2', null);
      const tokenizer = await loadGgufChatTokenizer(file);
      const model = await (await getLlamaRuntime()).llama.loadModel({ modelPath: file, vocabOnly: true });
      try {
        assert.equal(model.fileInfo.metadata.tokenizer.chat_template, undefined, 'the vocab GGUF has no template');
        assert.equal(tokenizer.templateSource, 'fallback');
        const { ids, lossMask } = tokenizer.renderChat(ONE_TURN);
        assert.equal(
          model.detokenize(ids as Token[], true),
          '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\nFour.<|im_end|>\n',
        );
        assert.deepEqual(maskedRuns(model, ids, lossMask), ['Four.<|im_end|>']);
        assert.deepEqual(tokenizer.stopStrings, [], '<|im_end|> is a token of this vocabulary');
      } finally {
        await tokenizer.dispose();
        await model.dispose();
      }
    });

    it('trains and stops on a textual <|im_end|> when the vocabulary lacks it (Llama 2 SPM)', async () => {
      const tokenizer = await loadGgufChatTokenizer(vocabGguf('llama-spm'));
      try {
        assert.equal(tokenizer.templateSource, 'fallback');
        assert.deepEqual(tokenizer.stopStrings, ['<|im_end|>']);
        const { ids, lossMask } = tokenizer.renderChat(ONE_TURN);
        assert.equal(ids[0], 1, 'BOS first, as add_bos_token says');
        assert.equal(ids.filter((id) => id === 1).length, 1);
        assert.ok(lossMask.some((m) => m === 1));
        assert.equal(lossMask.slice(0, tokenizer.renderGenerationPrompt(ONE_TURN.slice(0, 2)).length).indexOf(1), -1);
      } finally {
        await tokenizer.dispose();
      }
    });
  });
});
