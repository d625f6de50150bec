/**
 * earlyStopping: a run whose eval metric stops improving for `patience` evaluations ends there,
 * with its final adapter at the stopping step; one that keeps improving runs to its last step.
 * Real training of the toy model: teaching it "quack quack" for every animal makes the eval loss
 * on the animals' own sounds rise from the first evaluation.
 */
import assert from 'node:assert/strict';
import { initTf } from '../../../engine/backend.js';
import type { LoadedModel } from '../../../engine/gguf/model-file.js';
import { disposeWeights } from '../../../engine/model/weights.js';
import { improves } from '../../../engine/train/loop.js';
import { trainLora, type TrainLog } from '../../../engine/train/lora-trainer.js';
import { toyChats, toyQuackChats, trainToyModel, withTempDir } from '../../fixtures/engine/tiny-model.js';

describe('early stopping', function () {
  this.timeout(60000);
  let base: LoadedModel;

  before(async () => {
    await initTf();
    base = await trainToyModel(60);
  });
  after(() => disposeWeights(base.weights));

  const run = (evalSet: ReturnType<typeof toyChats>, metric: 'evalLoss' | 'evalTokenAccuracy', patience: number) =>
    withTempDir(async (dir) => {
      const logs: TrainLog[] = [];
      const result = await trainLora({
        baseModel: base,
        baseModelName: 'svc-test',
        train: toyQuackChats(),
        eval: evalSet,
        outputDir: dir,
        lora: { r: 4, alpha: 8 },
        maxSteps: 30,
        learningRate: 2e-2,
        batchSize: 3,
        evalSteps: 3,
        saveSteps: 6,
        seed: 1,
        evaluateBeforeTraining: false,
        earlyStopping: { metric, patience },
        onLog: (log) => {
          logs.push(log);
        },
      });
      return { result, logs };
    });

  it('stops when the eval loss has not improved for `patience` evaluations, the final adapter at that step', async () => {
    const { result, logs } = await run(toyChats(), 'evalLoss', 2);
    assert.equal(result.status, 'completed');
    assert.ok(result.stoppedEarly, `the eval loss on the old answers: ${logs.filter((l) => l.evalLoss !== undefined).map((l) => l.evalLoss!.toFixed(3))}`);
    const evals = logs.filter((l) => l.evalLoss !== undefined);
    const bestIndex = evals.findIndex((l) => l.step === result.stoppedEarly!.bestStep);
    assert.equal(evals[bestIndex].evalLoss, result.stoppedEarly!.bestValue);
    assert.ok(
      evals.every((l) => l.evalLoss! >= result.stoppedEarly!.bestValue),
      'the best is the lowest',
    );
    assert.equal(evals.length - 1 - bestIndex, 2, 'exactly `patience` evaluations after the best');
    assert.equal(result.steps, result.stoppedEarly!.step);
    assert.ok(result.steps < 30);
    assert.equal(logs.length, result.steps, 'no step after the stop');
    const final = result.artifacts.find((a) => a.kind === 'adapter')!;
    assert.equal(final.step, result.steps);
  });

  it('runs to the last step while the metric improves', async () => {
    const { result } = await run(toyQuackChats(), 'evalLoss', 2);
    assert.equal(result.stoppedEarly, undefined);
    assert.equal(result.steps, 30);
  });

  it('compares by direction: lower loss, higher accuracy; a first value always counts', () => {
    assert.ok(improves('evalLoss', 1, 2) && !improves('evalLoss', 2, 1) && !improves('evalLoss', 1, 1));
    assert.ok(improves('evalTokenAccuracy', 0.9, 0.8) && !improves('evalTokenAccuracy', 0.8, 0.9));
    assert.ok(improves('evalLoss', 5, NaN) && !improves('evalLoss', NaN, 5));
  });
});
