/**
 * The shipped assets work together: a LoRA fine-tune of models/svc-tiny.gguf on the quickstart
 * data teaches the JSON answer format, visibly, through llama.cpp. Uses the quickstart settings
 * documented in examples/quickstart/data/README.md (about 15 s here).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { readChatJsonl } from '../../../engine/data/chat-jsonl.js';
import { loadLlamaCppModel } from '../../../engine/infer/llama-cpp.js';
import { QUICKSTART_HYPERPARAMETERS } from '../../../engine/train/quickstart.js';
import { trainLora } from '../../../engine/train/lora-trainer.js';
import { withTempDir } from '../../fixtures/engine/tiny-model.js';

const repoFile = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const BASE = repoFile('models/svc-tiny.gguf');

function answerOf(text: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(text);
    const answer = (parsed as { answer?: unknown }).answer;
    return typeof answer === 'string' ? answer : undefined;
  } catch {
    return undefined;
  }
}

describe('quickstart: svc-tiny learns the JSON answer format', function () {
  this.timeout(180000);

  it('fine-tunes to a much lower eval loss and answers in JSON, where the base model does not', async function () {
    if (!existsSync(BASE)) this.skip();
    const train = await readChatJsonl(repoFile('examples/quickstart/data/train.jsonl'));
    const evalSet = await readChatJsonl(repoFile('examples/quickstart/data/eval.jsonl'));
    await withTempDir(async (dir) => {
      const result = await trainLora({ baseModel: BASE, train, eval: evalSet, outputDir: dir, ...QUICKSTART_HYPERPARAMETERS });
      assert.equal(result.status, 'completed');
      assert.ok(result.finalEvalLoss < result.initialEvalLoss / 3, `eval loss ${result.initialEvalLoss} -> ${result.finalEvalLoss}`);

      const model = await loadLlamaCppModel({ modelPath: BASE });
      const base = await model.createSession();
      const tuned = await model.createSession({ adapters: [{ path: result.artifacts.at(-1)!.path }] });
      try {
        let baseJson = 0;
        let tunedJson = 0;
        for (const example of evalSet) {
          const messages = example.messages.filter((m) => m.role !== 'assistant');
          if (answerOf((await base.generate({ messages, maxTokens: 80 })).text) !== undefined) baseJson++;
          if (answerOf((await tuned.generate({ messages, maxTokens: 80 })).text) !== undefined) tunedJson++;
        }
        assert.equal(baseJson, 0, 'the base model already answers in JSON: the demo would show nothing');
        assert.ok(tunedJson >= Math.ceil(evalSet.length * 0.8), `only ${tunedJson}/${evalSet.length} tuned answers are JSON`);
      } finally {
        await base.dispose();
        await tuned.dispose();
        await model.dispose();
      }
    });
  });
});
