import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { initTf, tf } from '../../../engine/backend.js';
import { TfjsBackend } from '../../../engine/backends/tfjs.js';
import { randomBatches } from '../../../engine/backends/torch/bench.js';
import { initLoraTensors, loraSpec } from '../../../engine/lora.js';
import type { LoadedModel } from '../../../engine/gguf/model-file.js';
import { disposeWeights, initWeights } from '../../../engine/model/weights.js';
import { trainLora, type TrainLog } from '../../../engine/train/lora-trainer.js';
import { pretrain } from '../../../engine/train/pretrain.js';
import { TEST_TINY } from '../../../engine/model/config.js';
import { toyChats, toyQuackChats, trainToyModel, withTempDir } from '../../fixtures/engine/tiny-model.js';
import { planRun } from '../../../sdk/trainer/dryRunPlan.js';

describe('engine training', function () {
  this.timeout(60000);
  let base: LoadedModel;

  before(async () => {
    await initTf();
    base = await trainToyModel(80);
  });
  after(() => disposeWeights(base.weights));

  it('pretraining lowers the loss on a small dataset', async () => {
    const losses: number[] = [];
    const { weights, result } = await pretrain({
      config: TEST_TINY,
      conversations: toyChats(),
      evalConversations: toyChats(),
      seed: 9,
      maxSteps: 25,
      batchSize: 6,
      learningRate: 1e-2,
      warmupSteps: 2,
      onLog: (log) => {
        losses.push(log.loss);
      },
    });
    disposeWeights(weights);
    assert.equal(losses.length, 25);
    assert.ok(result.finalEvalLoss < result.initialEvalLoss * 0.6, `eval loss ${result.initialEvalLoss} -> ${result.finalEvalLoss}`);
  });

  it('reports as many evaluations as the dry run plans, and with evaluateBeforeTraining: false makes no other', async () => {
    await withTempDir(async (dir) => {
      const logs: TrainLog[] = [];
      const train = toyQuackChats();
      const evalSet = toyQuackChats();
      const result = await trainLora({
        baseModel: base,
        baseModelName: 'svc-test',
        train,
        eval: evalSet,
        outputDir: dir,
        lora: { r: 4, alpha: 8 },
        maxSteps: 10,
        learningRate: 2e-2,
        batchSize: 3,
        evalSteps: 4,
        seed: 1,
        evaluateBeforeTraining: false, // as the cloud's worker runs a job
        onLog: (log) => {
          logs.push(log);
        },
      });
      const reported = logs.filter((l) => l.evalLoss !== undefined).map((l) => l.step);
      assert.deepEqual(reported, [4, 8, 10]);
      const plan = planRun({ trainLengths: train.map(() => 8), evalLengths: evalSet.map(() => 8), batchSize: 3, maxSteps: 10, seed: 1, evalSteps: 4 });
      assert.equal(plan.evaluations, reported.length, '`svc start --dry-run` promises the evaluations the run reports');
      assert.ok(Number.isNaN(result.initialEvalLoss), 'and the run spends none that it does not report');
    });
  });

  it('LoRA fine-tuning lowers the assistant-token loss and writes checkpoints and the final adapter', async () => {
    await withTempDir(async (dir) => {
      const logs: TrainLog[] = [];
      const checkpoints: number[] = [];
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
        saveSteps: 10,
        seed: 1,
        onLog: (log) => {
          logs.push(log);
        },
        onCheckpoint: ({ step }) => {
          checkpoints.push(step);
        },
      });
      assert.equal(result.status, 'completed');
      assert.ok(result.finalEvalLoss < result.initialEvalLoss * 0.7, `eval loss ${result.initialEvalLoss} -> ${result.finalEvalLoss}`);
      assert.deepEqual(
        logs.filter((l) => l.evalLoss !== undefined).map((l) => l.step),
        [8, 16, 24],
      );
      assert.ok(logs.every((l) => l.tokensPerSecond > 0 && l.learningRate > 0 && l.epoch > 0));
      assert.deepEqual(checkpoints, [10, 20]);
      assert.deepEqual(
        result.artifacts.map((a) => [a.kind, a.step]),
        [
          ['checkpoint', 10],
          ['checkpoint', 20],
          ['adapter', 24],
        ],
      );
      for (const artifact of result.artifacts) assert.ok(existsSync(artifact.path) && existsSync(artifact.configPath));
      const peft = JSON.parse(readFileSync(result.artifacts[2].configPath, 'utf8'));
      assert.deepEqual(
        [peft.r, peft.lora_alpha, peft.target_modules, peft.base_model_name_or_path],
        [4, 8, ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'], 'svc-test'],
        'the default targets: every attention and MLP projection',
      );
    });
  });

  it('is deterministic for a seed, and the seed matters', async () => {
    const run = (seed: number) =>
      withTempDir(async (dir) => {
        const losses: number[] = [];
        await trainLora({
          baseModel: base,
          train: [...toyQuackChats(), ...toyChats()],
          outputDir: dir,
          lora: { r: 2, alpha: 4 },
          maxSteps: 6,
          learningRate: 1e-2,
          batchSize: 2,
          seed,
          onLog: (log) => {
            losses.push(log.loss);
          },
        });
        return losses;
      });
    const first = await run(5);
    assert.deepEqual(await run(5), first);
    assert.notDeepEqual(await run(6), first);
  });

  it('stops at the next step boundary when the abort signal fires', async () => {
    await withTempDir(async (dir) => {
      const controller = new AbortController();
      const result = await trainLora({
        baseModel: base,
        train: toyQuackChats(),
        outputDir: dir,
        maxSteps: 1000,
        learningRate: 1e-2,
        batchSize: 2,
        seed: 1,
        saveSteps: 2,
        signal: controller.signal,
        onLog: (log) => {
          if (log.step === 3) controller.abort();
        },
      });
      assert.equal(result.status, 'aborted');
      assert.equal(result.steps, 3);
      assert.deepEqual(
        result.artifacts.map((a) => a.kind),
        ['checkpoint'],
      );
    });
  });

  // How soon it stops is measured in `npm run bench -- responsiveness`, not asserted here.
  it('notices an abort fired from outside the loop (a timer)', async () => {
    await withTempDir(async (dir) => {
      const controller = new AbortController();
      let aborted = false;
      let steps = 0;
      const training = trainLora({
        baseModel: base,
        train: toyQuackChats(),
        outputDir: dir,
        maxSteps: 100000,
        learningRate: 1e-2,
        batchSize: 2,
        seed: 1,
        signal: controller.signal,
        onLog: (log) => {
          steps = log.step;
          // Arm the timer once training is demonstrably under way.
          if (log.step === 2)
            setTimeout(() => {
              aborted = true;
              controller.abort();
            }, 200);
        },
      });
      const result = await training;
      assert.equal(result.status, 'aborted');
      assert.ok(aborted && steps > 2 && result.steps < 100000);
    });
  });

  it('rejects bad hyper-parameters before training', async () => {
    await assert.rejects(
      trainLora({ baseModel: base, train: toyChats(), outputDir: '/nonexistent', learningRate: 1e-3, batchSize: 2, seed: 1 }),
      /maxSteps or numTrainEpochs/,
    );
    await assert.rejects(
      trainLora({
        baseModel: base,
        train: toyChats(),
        outputDir: '/nonexistent',
        maxSteps: 1,
        learningRate: 1e-3,
        batchSize: 2,
        seed: 1,
        lora: { targetModules: ['qq'] },
      }),
      /unknown LoRA target module "qq"/,
    );
  });

  it('a LoRA step on a tied-output model keeps no tensor once the backend and weights are disposed', async () => {
    // The tied output's backward pass used to transpose the kept transpose of the embedding: a
    // third copy of it, never freed (a Qwen3-0.6B embedding is 620 MB).
    const config = { ...TEST_TINY, tiedOutput: true };
    const trainOnce = async () => {
      const weights = initWeights(config, 3);
      const backend = TfjsBackend.fromLoaded(config, weights);
      const lora = { r: 2, alpha: 4, targetModules: ['q_proj', 'v_proj'] };
      await backend.initLora(loraSpec(lora), initLoraTensors(config, lora, 1).tensors);
      const [batch] = randomBatches(config.vocabSize, 2, 12, 1);
      await backend.trainStep(batch, { learningRate: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 });
      await backend.dispose();
      disposeWeights(weights);
    };
    await trainOnce(); // makes the cached position tables of this length, which stay by design
    const before = tf.memory().numTensors;
    await trainOnce();
    assert.equal(tf.memory().numTensors, before);
  });
});
