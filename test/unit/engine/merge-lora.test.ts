/**
 * A merged export (engine/gguf/merge-lora.ts) of an adapter trained on the quickstart data (it
 * teaches svc-tiny to answer in JSON) loads in llama.cpp with no adapter and answers the eval prompts
 * as base + adapter does, greedy, character for character, with the eval answers' perplexity within
 * 1%. F16 keeps every answer. Q8_0 also quantises the activations in llama.cpp's matrix products,
 * which on svc-tiny (128 wide) tips a near tie among its wrong answers now and then, so it must keep
 * at least 90% of them (the bench prints the count). Checked with llama.cpp's logprobs: the quickstart
 * answer Q8_0 changes ("capital of Brazil?", wrong either way) parts at a token whose two best
 * logits base + adapter puts 0.04 apart, and Q8_0 orders 0.03 apart the other way. A failed merge
 * leaves nothing at the target.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readChatJsonl } from '../../../engine/data/chat-jsonl.js';
import { mergeLora } from '../../../engine/gguf/merge-lora.js';
import { readGgufHeader } from '../../../engine/gguf/reader.js';
import { QUICKSTART_HYPERPARAMETERS } from '../../../engine/train/quickstart.js';
import { trainLora } from '../../../engine/train/lora-trainer.js';
import { compareExport } from '../../support/exportParity.js';
import { disposeLlamaCppReference } from '../../support/llamaCppReference.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';

const repoFile = (p: string) => fileURLToPath(new URL(`../../../${p}`, import.meta.url));
const BASE = repoFile('models/svc-tiny.gguf');

describe('merged LoRA export answers like base + adapter', function () {
  this.timeout(300_000);
  let tmp: TempDir;
  let adapter: string;
  const evalSet = () => readChatJsonl(repoFile('examples/quickstart/data/eval.jsonl'));

  before(async function () {
    if (!existsSync(BASE)) this.skip();
    tmp = await createTempDir('merge');
    const train = await readChatJsonl(repoFile('examples/quickstart/data/train.jsonl'));
    const result = await trainLora({ baseModel: BASE, train, eval: await evalSet(), outputDir: tmp.path, ...QUICKSTART_HYPERPARAMETERS });
    assert.equal(result.status, 'completed');
    adapter = result.artifacts.at(-1)!.path;
  });
  after(async () => {
    await disposeLlamaCppReference();
    await tmp?.remove();
  });

  for (const [type, keep] of [
    ['q8_0', 0.9],
    ['f16', 1],
  ] as const) {
    it(`${type}: the same greedy answers on ${keep * 100}% of the eval prompts, perplexity within 1%`, async () => {
      const merged = path.join(tmp.path, `merged-${type}.gguf`);
      const progress: number[] = [];
      const result = await mergeLora({ base: BASE, adapter, out: merged, type, onProgress: ({ done }) => progress.push(done) });
      assert.ok(result.mergedTensors > 0);
      const header = await readGgufHeader(merged);
      assert.equal(
        header.tensors.some((t) => /lora/.test(t.name)),
        false,
        'one model file, no adapter tensors',
      );
      assert.equal(progress.at(-1), header.tensors.length);
      const parity = await compareExport({ base: BASE, adapter, merged, examples: await evalSet() });
      assert.ok(
        parity.changedByAdapter >= parity.prompts / 2,
        `the adapter changes only ${parity.changedByAdapter}/${parity.prompts} answers: the comparison would prove nothing`,
      );
      assert.ok(
        parity.sameAnswers >= keep * parity.prompts,
        `merged ${type} keeps ${parity.sameAnswers}/${parity.prompts}: ${JSON.stringify(parity.firstDifference)}`,
      );
      assert.ok(parity.perplexityRelativeDifference < 0.01, `perplexity ${JSON.stringify(parity.perplexity)}`);
    });
  }

  it('a bad adapter leaves nothing at the target', async () => {
    const notAdapter = path.join(tmp.path, 'not-an-adapter.gguf');
    writeFileSync(notAdapter, 'GGUF but not really');
    const out = path.join(tmp.path, 'bad', 'merged.gguf');
    const dir = path.dirname(out);
    mkdirSync(dir);
    await assert.rejects(mergeLora({ base: BASE, adapter: notAdapter, out, type: 'q8_0' }));
    assert.deepEqual(readdirSync(dir), []);
  });
});
