/**
 * A Hugging Face checkpoint added to svc is tokenized by llama.cpp on its converted GGUF (training,
 * dry run, preview and serving alike). That must give the ids transformers gives from the folder's
 * own tokenizer.json and chat template (apply_chat_template), on real templates (Qwen3's, Llama
 * 3.2's): the generation prompt serving feeds the model, and whole conversations training sees.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ChatMessage } from '../../../engine/data/chat-tokenizer.js';
import { loadModelChatTokenizer } from '../../../engine/data/model-chat-tokenizer.js';
import { convertHfFolder } from '../../../engine/hf/convert.js';
import { inspectHfFolder } from '../../../engine/hf/hfFolder.js';
import { buildHfFolder, type HfFolderOptions } from '../../support/hfTestModels.js';
import { testModelsDir } from '../../support/testModels.js';
import { requireTorchStack, torchTestPython } from '../../support/torchStack.js';

const SMALL = {
  hidden_size: 32,
  intermediate_size: 64,
  num_hidden_layers: 1,
  num_attention_heads: 2,
  num_key_value_heads: 1,
  head_dim: 16,
  max_position_embeddings: 512,
};
const CASES: Array<{ label: string; folder: HfFolderOptions; python: string }> = [
  {
    label: 'Qwen3',
    folder: { modelType: 'qwen3', tokenizer: 'qwen3', config: { ...SMALL, vocab_size: 151936, tie_word_embeddings: true } },
    python: 'enable_thinking=False',
  },
  {
    label: 'Llama 3.2',
    folder: { modelType: 'llama', tokenizer: 'llama3_2', config: { ...SMALL, vocab_size: 128256, tie_word_embeddings: true } },
    python: 'add_special_tokens=False',
  }, // both render strftime_now: today's date
];
const CONVERSATIONS: ChatMessage[][] = [
  [{ role: 'user', content: 'What is the capital of France?' }],
  [
    { role: 'system', content: 'You answer in JSON.' },
    { role: 'user', content: 'Extract: Ada Lovelace, born 1815 — née Byron. 日本語も。' },
  ],
];

async function transformersIds(folder: string, conversations: ChatMessage[][], kwargs: string): Promise<number[][]> {
  const script = `import json, sys
from transformers import AutoTokenizer
tok = AutoTokenizer.from_pretrained(sys.argv[1])
out = [list(tok.apply_chat_template(c, tokenize=True, add_generation_prompt=True, return_dict=False, ${kwargs})) for c in json.loads(sys.argv[2])]
print(json.dumps(out))`;
  const { stdout } = await promisify(execFile)(torchTestPython(), ['-c', script, folder, JSON.stringify(conversations)], { maxBuffer: 1 << 24 });
  return JSON.parse(stdout.trim().split('\n').pop()!);
}

describe('Hugging Face checkpoints: llama.cpp on the converted GGUF tokenizes as transformers does', function () {
  this.timeout(600_000);
  before(async function () {
    await requireTorchStack(this);
  });

  for (const { label, folder: options, python } of CASES) {
    it(`${label}: the generation prompt of each conversation has the same ids`, async () => {
      const folder = await buildHfFolder(options);
      const gguf = path.join(await testModelsDir(), `${path.basename(folder)}.gguf`);
      await convertHfFolder(await inspectHfFolder(folder), gguf);
      const expected = await transformersIds(folder, CONVERSATIONS, python);
      const tokenizer = await loadModelChatTokenizer(gguf);
      try {
        assert.equal(tokenizer.templateSource, 'gguf');
        for (const [i, conversation] of CONVERSATIONS.entries()) {
          assert.deepEqual(tokenizer.renderGenerationPrompt(conversation), expected[i], `conversation ${i}`);
        }
      } finally {
        await tokenizer.dispose();
      }
    });
  }
});
