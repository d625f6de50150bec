/**
 * Serving prompts a real (non-svc) model with exactly the tokens training used as the prompt of
 * each assistant turn: LlamaCppModel.chatPromptTokens, which the inference session feeds
 * llama.cpp, equals ChatTokenizer.renderGenerationPrompt, and that is a prefix of the trained
 * conversation right up to the first trained token.
 */
import assert from 'node:assert/strict';
import type { LlamaModel } from 'node-llama-cpp';
import type { ChatTokenizer } from '../../../engine/data/chat-tokenizer.js';
import { loadGgufChatTokenizer } from '../../../engine/data/gguf-chat-tokenizer.js';
import { LlamaCppModel, getLlamaRuntime } from '../../../engine/infer/llama-cpp.js';
import type { ChatMessage } from '../../../engine/tokenizer.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { TEMPLATE_CASES, realTemplate, vocabWithTemplate } from '../../support/chatTemplates.js';

const CONVERSATION: ChatMessage[] = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Name a colour.' },
  { role: 'assistant', content: 'Blue.' },
  { role: 'user', content: 'Another one?' },
];

describe('engine/infer/llama-cpp: serving prompts with the training renderer', function () {
  this.timeout(120000);
  let dir: TempDir;
  before(async () => {
    dir = await createTempDir('chat-serving');
  });
  after(async () => {
    await dir.remove();
  });

  for (const c of TEMPLATE_CASES) {
    it(`${c.name}: the prompt tokens serving uses equal renderGenerationPrompt`, async () => {
      const file = await vocabWithTemplate(dir.path, c.vocab, await realTemplate(c.template));
      const { lib, llama } = await getLlamaRuntime();
      // Only the vocabulary is needed to build prompts; the session code calls chatPromptTokens.
      const model: LlamaModel = await llama.loadModel({ modelPath: file, vocabOnly: true });
      const tokenizer: ChatTokenizer = await loadGgufChatTokenizer(file);
      try {
        const serving = new LlamaCppModel(lib, llama, model, 1);
        assert.equal(serving.usesSvcTemplate, false);
        assert.equal(serving.chatTokenizer.templateSource, 'gguf');
        const prompt = serving.chatPromptTokens(CONVERSATION);
        assert.deepEqual(prompt, tokenizer.renderGenerationPrompt(CONVERSATION));
        // Training the next answer starts exactly where this prompt ends.
        const trained = tokenizer.renderChat([...CONVERSATION, { role: 'assistant', content: 'Red.' }]);
        assert.deepEqual(trained.ids.slice(0, prompt.length), prompt);
        assert.equal(trained.lossMask.indexOf(1, prompt.length - 1), prompt.length);
      } finally {
        await tokenizer.dispose();
        await model.dispose();
      }
    });
  }
});
