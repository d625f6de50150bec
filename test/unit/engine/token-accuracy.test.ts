/**
 * Mean token accuracy (OpenAI's definition: the share of loss-carrying tokens whose most likely
 * next token is the target) as the tfjs backend and the loop report it: it equals a count made
 * token by token from the model's own next-token logits, and it rises as an adapter learns a
 * fixed answer.
 */
import assert from 'node:assert/strict';
import { initTf } from '../../../engine/backend.js';
import { TfjsBackend } from '../../../engine/backends/tfjs.js';
import type { LoadedModel } from '../../../engine/gguf/model-file.js';
import { DEFAULT_TARGET_MODULES, initLoraTensors, loraSpec } from '../../../engine/lora.js';
import { disposeWeights } from '../../../engine/model/weights.js';
import { renderChat } from '../../../engine/tokenizer.js';
import { packBatch } from '../../../engine/train/batches.js';
import { trainLora, type TrainLog } from '../../../engine/train/lora-trainer.js';
import { toyChats, toyQuackChats, trainToyModel, withTempDir } from '../../fixtures/engine/tiny-model.js';

const argmax = (values: Float32Array) => values.reduce((best, v, i) => (v > values[best] ? i : best), 0);

describe('mean token accuracy', function () {
  this.timeout(60000);
  let base: LoadedModel;

  before(async () => {
    await initTf();
    base = await trainToyModel(60);
  });
  after(() => disposeWeights(base.weights));

  it('evalBatch and trainStep count the masked tokens whose argmax is the target, as a token-by-token count does', async () => {
    const backend = TfjsBackend.fromLoaded(base.config, base.weights);
    const lora = { r: 4, alpha: 8, targetModules: DEFAULT_TARGET_MODULES };
    await backend.initLora(loraSpec(lora), initLoraTensors(base.config, lora, 5).tensors);
    const examples = toyChats().map((chat) => renderChat(chat));
    let expected = 0;
    let masked = 0;
    for (const example of examples) {
      for (let t = 1; t < example.ids.length; t++) {
        if (!example.lossMask[t]) continue;
        masked++;
        if (argmax(await backend.logits(example.ids.slice(0, t))) === example.ids[t]) expected++;
      }
    }
    assert.ok(expected > 0 && expected < masked, `a batch the model gets partly right (${expected} of ${masked}), so the count is not trivially 0 or all`);
    const batch = packBatch(examples);
    const evaluated = await backend.evalBatch(batch);
    assert.equal(evaluated.maskedTokens, masked);
    assert.equal(evaluated.correctTokens, expected);
    // The step reports the accuracy of the forward pass before its update.
    const step = await backend.trainStep(batch, { learningRate: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 });
    assert.equal(step.tokenAccuracy, expected / masked);
  });

  it('rises on train and eval as an adapter learns a fixed answer', async () => {
    await withTempDir(async (dir) => {
      const logs: TrainLog[] = [];
      const result = await trainLora({
        baseModel: base,
        baseModelName: 'svc-test',
        train: toyQuackChats(),
        eval: toyQuackChats(),
        outputDir: dir,
        lora: { r: 4, alpha: 8 },
        maxSteps: 24,
        learningRate: 2e-2,
        batchSize: 3,
        evalSteps: 8,
        seed: 1,
        onLog: (log) => {
          logs.push(log);
        },
      });
      const evals = logs.filter((l) => l.evalTokenAccuracy !== undefined).map((l) => l.evalTokenAccuracy!);
      assert.equal(evals.length, 3);
      assert.ok(evals.every((a) => a >= 0 && a <= 1));
      // Before, the toy model answers each animal's own sound; after, "quack quack" token for token.
      assert.ok(result.finalEvalTokenAccuracy > 0.85, `after: ${result.finalEvalTokenAccuracy}`);
      assert.ok(
        result.initialEvalTokenAccuracy < result.finalEvalTokenAccuracy - 0.1,
        `before ${result.initialEvalTokenAccuracy}, after ${result.finalEvalTokenAccuracy}`,
      );
      assert.equal(result.finalEvalTokenAccuracy, evals[evals.length - 1]);
      const train = logs.map((l) => l.tokenAccuracy);
      assert.ok(train.every((a) => a >= 0 && a <= 1));
      const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
      assert.ok(mean(train.slice(-4)) > mean(train.slice(0, 4)) + 0.08, `train accuracy ${train.map((a) => a.toFixed(2)).join(' ')}`);
    });
  });
});
