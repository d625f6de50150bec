/**
 * One job on several torch ranks (torchrun, gloo on CPU), DDP and FSDP alike: two ranks at batchSize
 * 4 train the same steps as one process at batch 8 (losses and LoRA within 1e-5), a rank killed mid-job
 * fails the job with a sentence that names it and ends the other ranks, and a job killed outright
 * leaves no rank behind.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { writeRandomModelGguf } from '../../../engine/backends/torch/bench.js';
import { startTorchBackend, type TorchBackend } from '../../../engine/backends/torch/index.js';
import type { TorchRanks } from '../../../engine/backends/torch/ranks.js';
import type { TokenBatch } from '../../../engine/backends/types.js';
import { readChatJsonl } from '../../../engine/data/chat-jsonl.js';
import { readModelConfig } from '../../../engine/gguf/model-file.js';
import { initLoraTensors, loraSpec } from '../../../engine/lora.js';
import { llamaConfig } from '../../../engine/model/config.js';
import { trainLora } from '../../../engine/train/lora-trainer.js';
import { packageRoot } from '../../../sdk/packageRoot.js';
import { pollUntil } from '../../support/poll.js';
import { descendantPids } from '../../support/processes.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { requireTorchStack, torchTestPython } from '../../support/torchStack.js';

const MODEL = path.join(packageRoot(), 'models', 'svc-tiny.gguf');
const QUICKSTART = path.join(packageRoot(), 'examples', 'quickstart', 'data');
const TWO_CPU_RANKS: TorchRanks = { perNode: 2, backend: 'gloo' };
/** Float32 sums over the batch in another order (per rank, then across ranks): rounding only. */
const TOLERANCE = 1e-5;

function start(ranks?: TorchRanks): Promise<TorchBackend> {
  return startTorchBackend({ python: torchTestPython(), dtype: 'float32', threads: 1, ranks });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The rank processes under torchrun, by RANK. */
function rankPids(torchrun: number): Map<number, number> {
  const ranks = new Map<number, number>();
  for (const pid of descendantPids(torchrun, 'svc_torch_server.py')) {
    const rank = /(?:^|\0)RANK=(\d+)\0/.exec(readFileSync(`/proc/${pid}/environ`, 'latin1'))?.[1];
    if (rank !== undefined) ranks.set(Number(rank), pid);
  }
  return ranks;
}

function batchOf(vocab: number): TokenBatch {
  const batchSize = 4;
  const length = 32;
  const size = batchSize * length;
  const inputs = Int32Array.from({ length: size }, (_, i) => (i * 7) % vocab);
  return { batchSize, length, inputs, targets: inputs.map((x) => (x + 1) % vocab), mask: new Float32Array(size).fill(1), maskedTokens: size, tokens: size };
}

describe('torch backend on several ranks (torchrun, gloo)', function () {
  this.timeout(240_000);
  let dir: TempDir;
  const started: TorchBackend[] = [];

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    await requireTorchStack(this);
  });
  beforeEach(async () => {
    dir = await createTempDir('torch-ranks');
  });
  afterEach(async () => {
    await Promise.all(started.splice(0).map((b) => b.dispose()));
    await dir.remove();
  });

  for (const strategy of ['ddp', 'fsdp'] as const)
    it(`${strategy}: 2 ranks at batchSize 4 give the losses and the adapter of 1 process at batch 8`, async () => {
      const train = (await readChatJsonl(path.join(QUICKSTART, 'train.jsonl'))).slice(0, 48);
      const evalSet = (await readChatJsonl(path.join(QUICKSTART, 'eval.jsonl'))).slice(0, 5); // odd: one rank evaluates 3 rows, the other 2
      const run = async (ranks: TorchRanks | undefined, batchSize: number) => {
        const backend = await start(ranks);
        started.push(backend);
        const losses: number[] = [];
        const accuracies: number[] = [];
        const result = await trainLora({
          baseModel: MODEL,
          backend,
          train,
          eval: evalSet,
          outputDir: path.join(dir.path, `out-${batchSize}`),
          maxSteps: 6,
          evalSteps: 3,
          learningRate: 3e-3,
          batchSize,
          seed: 3,
          onLog: (entry) => {
            losses.push(entry.loss);
            accuracies.push(entry.tokenAccuracy ?? Number.NaN);
          },
        });
        const lora = await backend.loraTensors();
        const held = backend.rankParameterBytes;
        const torchrun = backend.pid!;
        const ranksBefore = [...rankPids(torchrun).values()];
        await backend.dispose();
        return { result, losses, accuracies, lora, worldSize: backend.info.worldSize, strategy: backend.info.strategy, held, torchrun, ranksBefore };
      };
      const one = await run(undefined, 8);
      const two = await run({ ...TWO_CPU_RANKS, strategy }, 4);

      assert.equal(one.worldSize, 1);
      assert.equal(two.worldSize, 2);
      assert.equal(two.strategy, strategy);
      // FSDP: rank 0 holds its half of the layers' weights, the embeddings, norm and head whole.
      if (strategy === 'fsdp') assert.ok(two.held < one.held * 0.9, `rank 0 holds ${two.held} bytes of parameters, one process ${one.held}`);
      else assert.equal(two.held, one.held);
      assert.equal(two.ranksBefore.length, 2, 'torchrun ran two ranks');
      assert.equal(two.result.steps, 6);
      assert.equal(two.losses.length, one.losses.length);
      two.losses.forEach((loss, i) =>
        assert.ok(Math.abs(loss - one.losses[i]) <= TOLERANCE * Math.max(1, one.losses[i]), `step ${i + 1}: 2 ranks ${loss}, 1 process ${one.losses[i]}`),
      );
      // Token accuracy is summed over the ranks too: at most one token's share apart (an argmax tie may fall either way).
      two.accuracies.forEach((accuracy, i) =>
        assert.ok(Math.abs(accuracy - one.accuracies[i]) <= 1 / 256, `step ${i + 1}: accuracy ${accuracy} vs ${one.accuracies[i]}`),
      );
      assert.ok(
        Math.abs(two.result.finalEvalLoss - one.result.finalEvalLoss) <= TOLERANCE * one.result.finalEvalLoss,
        `eval ${two.result.finalEvalLoss} vs ${one.result.finalEvalLoss}`,
      );
      for (const [name, tensor] of Object.entries(one.lora)) {
        const other = two.lora[name].data;
        const worst = tensor.data.reduce((max, x, i) => Math.max(max, Math.abs(x - other[i])), 0);
        assert.ok(worst <= TOLERANCE, `${name}: max |difference| ${worst}`);
      }
      // The shutdown reached every rank: none is left.
      await pollUntil(() => ![two.torchrun, ...two.ranksBefore].some(alive), { timeoutMs: 20_000, description: 'torchrun and its ranks to exit' });
    });

  for (const strategy of ['ddp', 'fsdp'] as const)
    it(`${strategy}: a rank killed mid-job fails the step with a sentence naming it, and no rank is left behind`, async () => {
      const backend = await start({ ...TWO_CPU_RANKS, strategy });
      started.push(backend);
      const config = await readModelConfig(MODEL);
      await backend.loadBase(MODEL, config);
      const { config: lora, tensors } = initLoraTensors(config, { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] }, 1, backend.projectionShapes);
      await backend.initLora(loraSpec(lora), tensors);
      const optimizer = { learningRate: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };
      await backend.trainStep(batchOf(config.vocabSize), optimizer);
      const torchrun = backend.pid!;
      const ranks = rankPids(torchrun);
      assert.equal(ranks.size, 2);
      process.kill(ranks.get(1)!, 'SIGKILL');
      await assert.rejects(
        (async () => {
          for (;;) await backend.trainStep(batchOf(config.vocabSize), optimizer);
        })(),
        (error: Error) => {
          assert.match(
            error.message,
            /^the torch backend's rank 1 of 2 failed \(Signal 9 \(SIGKILL\)[^)]*\); torchrun stopped the other ranks while (training|idle)/,
          );
          return true;
        },
      );
      await pollUntil(() => ![torchrun, ...ranks.values()].some(alive), { timeoutMs: 60_000, description: 'torchrun and the surviving rank to exit' });
    });

  it("fsdp: each rank's memory grows by its shard of the base while loading, well under a DDP rank's", async () => {
    // Layers outweigh the embeddings (a 262-token vocabulary): 8 × 4.2M float32 weights, about 134 MB.
    const config = llamaConfig({
      name: 'd512x8',
      vocabSize: 262,
      contextLength: 64,
      embeddingLength: 512,
      blockCount: 8,
      headCount: 8,
      feedForwardLength: 2048,
    });
    const file = path.join(dir.path, 'd512x8.gguf');
    // Stored as bfloat16 and read into float32: a rank's weights are its own memory, not pages of the file.
    await writeRandomModelGguf(file, config, 'bf16');
    const lora = { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj'] };
    const loadPeaks = async (strategy: 'ddp' | 'fsdp') => {
      const backend = await start({ ...TWO_CPU_RANKS, strategy });
      started.push(backend);
      await backend.loadBase(file, config);
      await backend.initLora(loraSpec(lora), initLoraTensors(config, lora, 1, backend.projectionShapes).tensors);
      const peaks = backend.rankLoadRssBytes;
      const baseBytes = backend.baseBytes;
      await backend.dispose();
      return { peaks, baseBytes };
    };
    const ddp = await loadPeaks('ddp');
    const fsdp = await loadPeaks('fsdp');
    const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MB`;
    const report = `base ${mb(ddp.baseBytes)}; growth while loading by rank: DDP ${ddp.peaks.map(mb).join(', ')}, FSDP ${fsdp.peaks.map(mb).join(', ')}`;
    assert.equal(ddp.peaks.length, 2, report);
    assert.equal(fsdp.peaks.length, 2, report);
    // A DDP rank holds the whole base: what it grows by is the base, not noise.
    for (const peak of ddp.peaks) assert.ok(peak >= 0.9 * ddp.baseBytes, report);
    for (const peak of fsdp.peaks) assert.ok(peak < 0.75 * Math.min(...ddp.peaks), report);
  });

  it('fsdp: a base kept quantised (its Q4_K and Q6_K blocks whole on every rank) trains as one process does', async () => {
    const config = llamaConfig({
      name: 'd256x2',
      vocabSize: 262,
      contextLength: 64,
      embeddingLength: 256,
      blockCount: 2,
      headCount: 4,
      feedForwardLength: 512,
    });
    const file = path.join(dir.path, 'd256x2-q4_k_m.gguf');
    await writeRandomModelGguf(file, config, 'q4_k_m');
    const lora = { r: 4, alpha: 8, targetModules: ['q_proj', 'v_proj', 'down_proj'] };
    const optimizer = { learningRate: 1e-2, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };
    const losses = async (ranks?: TorchRanks) => {
      const backend = await startTorchBackend({ python: torchTestPython(), dtype: 'float32', threads: 1, ranks, quantizedBase: 'keep' });
      started.push(backend);
      await backend.loadBase(file, config);
      assert.ok(backend.quantizedProjections > 0, 'the projections stay quantised');
      await backend.initLora(loraSpec(lora), initLoraTensors(config, lora, 1, backend.projectionShapes).tensors);
      const out: number[] = [];
      for (let i = 0; i < 3; i++) out.push((await backend.trainStep(batchOf(config.vocabSize), optimizer)).loss);
      await backend.dispose();
      return out;
    };
    const one = await losses();
    const two = await losses({ ...TWO_CPU_RANKS, strategy: 'fsdp' });
    two.forEach((loss, i) => assert.ok(Math.abs(loss - one[i]) <= TOLERANCE * Math.max(1, one[i]), `step ${i + 1}: 2 ranks ${loss}, 1 process ${one[i]}`));
  });

  it('a job killed outright (torchrun SIGKILLed) takes its ranks with it', async () => {
    const backend = await start(TWO_CPU_RANKS);
    started.push(backend);
    // Loaded: rank 0 waits on its input and rank 1 on rank 0, neither on torchrun.
    const config = await readModelConfig(MODEL);
    await backend.loadBase(MODEL, config);
    const torchrun = backend.pid!;
    const ranks = rankPids(torchrun);
    assert.equal(ranks.size, 2);
    process.kill(torchrun, 'SIGKILL');
    await pollUntil(() => ![...ranks.values()].some(alive), { timeoutMs: 20_000, description: 'the ranks to end with torchrun' });
  });
});
