/**
 * LoRA training of real-architecture GGUFs (random weights, real vocabularies and templates),
 * through trainLora as the worker calls it, on both compute backends:
 *   - the loss goes down, and tfjs and torch give the same losses from the same start;
 *   - llama.cpp, loading the exported GGUF adapter on the unmodified base file, gives the same
 *     next-token distributions and greedy choices as the backend's own forward pass with its
 *     trained LoRA, along a chat prompt's continuation;
 *   - the PEFT adapter holds the GGUF adapter's numbers under Hugging Face names, with lora_B of
 *     q_proj / k_proj re-ordered for llama as convert_hf_to_gguf.py's permute defines (checked
 *     here with an independent implementation of that reshape, not the engine's);
 *   - bad inputs fail in one clear line before loading: an architecture svc does not train, a
 *     truncated file, a model too large for the tfjs heap or for free memory; a model without a
 *     chat template trains with the ChatML fallback and says so.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { tf } from '../../../engine/backend.js';
import { estimateTfjsMemory, TfjsBackend } from '../../../engine/backends/tfjs.js';
import { randomBatches } from '../../../engine/backends/torch/bench.js';
import { readModelConfig } from '../../../engine/gguf/model-file.js';
import { initLoraTensors, loraSpec } from '../../../engine/lora.js';
import type { ComputeBackend } from '../../../engine/backends/types.js';
import { loadModelChatTokenizer } from '../../../engine/data/model-chat-tokenizer.js';
import { readAdapterGguf } from '../../../engine/gguf/adapter-file.js';
import { decodeSafetensors } from '../../../engine/gguf/peft.js';
import { llamaConfig, type ModelConfig } from '../../../engine/model/config.js';
import {
  assertFits,
  countModelParameters,
  FALLBACK_TEMPLATE_NOTICE,
  trainLora,
  type TrainLoraOptions,
  type TrainLoraResult,
} from '../../../engine/train/lora-trainer.js';
import { buildUnsupportedArchModel, truncatedCopy } from '../../support/badModels.js';
import type { LogitsSource } from '../../support/engineGreedy.js';
import { hfToGgufRows } from '../../support/hfLayout.js';
import { compareWithReference, disposeLlamaCppReference, greedy, logProbabilities } from '../../support/llamaCppReference.js';
import { buildTestModel, dequantisedCopy, type TestModelOptions } from '../../support/testModels.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { startExactTorchBackend } from '../../support/torchStack.js';

const CHATS = [
  ['Name a fruit.', 'Pineapple, of course.'],
  ['What should I eat?', 'Pineapple, of course.'],
  ['Favourite snack?', 'Pineapple, of course.'],
  ['Something sweet?', 'Pineapple, of course.'],
].map(([user, assistant]) => [
  { role: 'user' as const, content: user },
  { role: 'assistant' as const, content: assistant },
]);
const STEPS = 6;
const GREEDY_TOKENS = 8;
const NEAR_TOP = -5;
/** |Δ log p| near the top: llama.cpp's float32 path vs an exact one, as in real-engine-parity.test.ts (plus the adapter's products). */
const LOG_PROB_TOLERANCE = 0.05;
const LLAMA: TestModelOptions = { arch: 'llama', vocab: 'llama-spm', chatTemplate: null };
const QWEN3: TestModelOptions = { arch: 'qwen3', vocab: 'qwen2', weightType: 'Q8_0' };

type Backend = ComputeBackend & LogitsSource;
const BACKENDS: Record<string, () => Promise<Backend>> = {
  tfjs: async () => new TfjsBackend(),
  torch: startExactTorchBackend,
};

describe('LoRA training of real architectures: adapters llama.cpp and PEFT load', function () {
  this.timeout(300000);
  let tmp: TempDir;
  const runs = new Map<string, { result: TrainLoraResult; losses: number[]; notices: string[] }>();
  before(async () => {
    tmp = await createTempDir('real-training');
  });
  after(async () => {
    await disposeLlamaCppReference();
    await tmp?.remove();
  });

  /** Trains `model` on `backend`, then checks llama.cpp's greedy with the adapter against the backend's. */
  async function trainAndCompare(label: string, model: string, backendName: string, options: Partial<TrainLoraOptions> = {}) {
    const backend = await BACKENDS[backendName]();
    try {
      const losses: number[] = [];
      const notices: string[] = [];
      const result = await trainLora({
        baseModel: model,
        backend,
        train: CHATS,
        outputDir: `${tmp.path}/${label}-${backendName}`,
        lora: { r: 4, alpha: 8 },
        maxSteps: STEPS,
        learningRate: 2e-2,
        batchSize: 4,
        seed: 3,
        warmupSteps: 0,
        onLog: (log) => {
          losses.push(log.loss);
        },
        onNotice: (n) => {
          notices.push(n);
        },
        ...options,
      });
      runs.set(`${label}/${backendName}`, { result, losses, notices });
      assert.ok(losses.at(-1)! < losses[0] * 0.8, `${backendName}: loss ${losses[0]} -> ${losses.at(-1)}`);
      const tokenizer = await loadModelChatTokenizer(model);
      const prompt = tokenizer.renderGenerationPrompt([{ role: 'user', content: 'Name a fruit.' }]);
      await tokenizer.dispose();
      const adapter = result.artifacts.find((a) => a.kind === 'adapter')!;
      // Along llama.cpp's greedy continuation with the adapter, every next-token distribution of
      // the backend agrees with llama.cpp's, and so does its choice wherever llama.cpp's top two
      // are further apart than twice the tolerance (a trained model's distributions are flatter
      // than a random one's, so near-ties occur and are not decided by either side's rounding).
      // A quantised base is compared through its dequantised copy (see real-engine-parity.test.ts).
      const exactModel = await dequantisedCopy(model);
      const continuation = await greedy(exactModel, prompt, GREEDY_TOKENS, { lora: adapter.path });
      let decided = 0;
      for (let i = 0; i < GREEDY_TOKENS; i++) {
        const context = [...prompt, ...continuation.slice(0, i)];
        const reference = await logProbabilities(exactModel, context, { lora: adapter.path });
        const comparison = compareWithReference(await backend.logits(context), reference, NEAR_TOP);
        assert.ok(comparison.maxDiff < LOG_PROB_TOLERANCE, `${backendName}, token ${i}: ${JSON.stringify(comparison)}`);
        const [first, second] = [...reference].sort((a, b) => b - a);
        if (first - second > 2 * LOG_PROB_TOLERANCE) {
          assert.ok(comparison.sameArgmax, `${backendName}, token ${i}: llama.cpp picks ${continuation[i]} by ${first - second}`);
          decided++;
        }
      }
      assert.ok(decided >= GREEDY_TOKENS / 2, `only ${decided} clear choices`);
      assert.notDeepEqual(await greedy(exactModel, prompt, GREEDY_TOKENS), continuation, 'the adapter changes the continuation');
    } finally {
      await backend.dispose();
    }
  }

  for (const backendName of Object.keys(BACKENDS)) {
    it(`llama (Llama 2 vocabulary, no chat template), ${backendName}: loss falls, llama.cpp with the GGUF adapter continues as the backend does, ChatML fallback said`, async () => {
      await trainAndCompare('llama', await buildTestModel(LLAMA), backendName);
      assert.deepEqual(runs.get(`llama/${backendName}`)!.notices, [FALLBACK_TEMPLATE_NOTICE]);
    });
  }

  it('qwen3 Q8_0 (Qwen vocabulary and template), torch: the same for a tied, q/k-normed model', async () => {
    await trainAndCompare('qwen3', await buildTestModel(QWEN3), 'torch');
  });

  it('tfjs and torch give the same losses from the same start', () => {
    const tfjs = runs.get('llama/tfjs')?.losses,
      torch = runs.get('llama/torch')?.losses;
    assert.ok(tfjs && torch, 'both llama runs ran');
    assert.equal(tfjs.length, STEPS);
    tfjs.forEach((loss, i) => assert.ok(Math.abs(loss - torch[i]) < 1e-3 * Math.max(1, loss), `step ${i + 1}: tfjs ${loss}, torch ${torch[i]}`));
  });

  it('the PEFT safetensors hold the GGUF adapter under HF names, q/k lora_B permuted back for llama only', async () => {
    for (const [key, architecture] of [
      ['llama/torch', 'llama'],
      ['qwen3/torch', 'qwen3'],
    ] as const) {
      const run = runs.get(key);
      assert.ok(run, `${key} ran`);
      const final = run.result.artifacts.find((a) => a.kind === 'adapter')!;
      const gguf = await readAdapterGguf(final.path);
      const peft = decodeSafetensors(readFileSync(final.safetensorsPath));
      const config = JSON.parse(readFileSync(final.configPath, 'utf8'));
      assert.deepEqual([config.r, config.lora_alpha, config.peft_type], [4, 8, 'LORA']);
      assert.deepEqual([...config.target_modules].sort(), ['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
      assert.equal(typeof config.base_model_name_or_path, 'string');
      assert.equal(peft.size, Object.keys(gguf.tensors).length);
      const modulePath: Record<string, string> = {
        attn_q: 'self_attn.q_proj',
        attn_k: 'self_attn.k_proj',
        attn_v: 'self_attn.v_proj',
        attn_output: 'self_attn.o_proj',
        ffn_gate: 'mlp.gate_proj',
        ffn_up: 'mlp.up_proj',
        ffn_down: 'mlp.down_proj',
      };
      let permuted = 0;
      for (const [name, matrix] of Object.entries(gguf.tensors)) {
        const [, block, linear, part] = /^blk\.(\d+)\.(\w+)\.weight\.lora_(a|b)$/.exec(name)!;
        const hf = peft.get(`base_model.model.model.layers.${block}.${modulePath[linear]}.lora_${part.toUpperCase()}.weight`);
        assert.ok(hf, `${name} has a PEFT tensor`);
        assert.deepEqual(hf.shape, matrix.shape, name);
        const heads = linear === 'attn_q' ? 4 : 2; // testModels.ts: 4 heads, 2 key/value heads
        if (architecture === 'llama' && part === 'b' && (linear === 'attn_q' || linear === 'attn_k')) {
          assert.deepEqual(hfToGgufRows(hf, heads), matrix.data, `${name}: permute(PEFT) = GGUF`);
          assert.notDeepEqual(hf.data, matrix.data, `${name}: the permutation moved rows`);
          permuted++;
        } else {
          assert.deepEqual(hf.data, matrix.data, name);
        }
      }
      assert.equal(permuted, architecture === 'llama' ? 4 : 0);
    }
  });

  describe('bad inputs: one clear line, before anything is loaded', () => {
    const attempt = (baseModel: string, backend?: ComputeBackend) =>
      trainLora({ baseModel, backend, train: CHATS, outputDir: `${tmp.path}/bad`, maxSteps: 1, learningRate: 1e-3, batchSize: 1, seed: 1 });

    it('an architecture svc does not train names it and the ones it does', async () => {
      await assert.rejects(attempt(await buildUnsupportedArchModel()), (err: Error) => {
        assert.match(err.message, /phi3/);
        assert.match(err.message, /llama.*qwen2.*qwen3/);
        assert.ok(!err.message.includes('\n'));
        return true;
      });
    });

    it('a truncated file', async () => {
      const model = await buildTestModel(LLAMA);
      await assert.rejects(attempt(await truncatedCopy(model, -1000)), /^Error: truncated GGUF: tensor \S+ needs bytes up to \d+ but the file has \d+/);
      await assert.rejects(attempt(await truncatedCopy(model, 5000)), /^Error: truncated GGUF: .* needs more bytes than the file has \(5000\)/);
    });

    const qwen3_06b: ModelConfig = llamaConfig({
      name: 'Qwen3-0.6B',
      architecture: 'qwen3',
      vocabSize: 151936,
      contextLength: 40960,
      embeddingLength: 1024,
      blockCount: 28,
      feedForwardLength: 3072,
      headCount: 16,
      headCountKv: 8,
      headDim: 128,
      ropeStyle: 'neox',
      qkNorm: true,
      tiedOutput: true,
    });
    it('a model the tfjs heap cannot hold says to use the torch backend', () => {
      assert.throws(
        () => assertFits(new TfjsBackend(), qwen3_06b, 8, 512),
        /^Error: Qwen3-0\.6B \(\d+M parameters\) at batch 8 × 512 tokens needs about [\d.]+ GiB on the tfjs backend, whose wasm heap stops at 4 GiB; train it with the torch backend/,
      );
      assert.doesNotThrow(() =>
        assertFits(
          new TfjsBackend(),
          llamaConfig({ name: 'small', vocabSize: 32000, contextLength: 256, embeddingLength: 64, blockCount: 2, feedForwardLength: 256, headCount: 4 }),
          4,
          64,
        ),
      );
    });
    it('the tfjs estimate is not below the measured peak of a real step (Qwen vocabulary, all projections)', async () => {
      const modelPath = await buildTestModel(QWEN3);
      const config = await readModelConfig(modelPath);
      const backend = new TfjsBackend();
      try {
        await backend.loadBase(modelPath, config);
        const lora = { r: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
        await backend.initLora(loraSpec(lora), initLoraTensors(config, lora, 1).tensors);
        const [batch] = randomBatches(config.vocabSize, 4, 32, 1);
        const optimizer = { learningRate: 1e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0, maxGradNorm: 1 };
        await backend.trainStep(batch, optimizer); // the first step also makes the kept transposes
        const profile = await tf.profile(async () => {
          await backend.trainStep(batch, optimizer);
        });
        const peak = profile.peakBytes; // every tensor's bytes at the peak, the weights included
        assert.ok(peak > tf.memory().numBytes, 'peakBytes counts what was held before the step too');
        const estimate = estimateTfjsMemory(config, countModelParameters(config), 4, 32);
        assert.ok(estimate >= peak, `estimate ${estimate} below the measured peak ${peak}`);
        assert.ok(estimate < 3 * peak, `estimate ${estimate} far above the measured peak ${peak}`);
      } finally {
        await backend.dispose();
      }
    });
    it('a model larger than free memory on a CPU backend is refused with the numbers', () => {
      const huge = llamaConfig({ ...qwen3_06b, name: 'huge', embeddingLength: 16384, feedForwardLength: 53248, blockCount: 126, headCount: 128, headDim: 128 });
      const cpu = { info: { name: 'torch', device: 'cpu (2 threads)', dtype: 'float32' } } as ComputeBackend;
      assert.throws(() => assertFits(cpu, huge, 1, 512), /^Error: huge needs about [\d.]+ GiB for its float32 weights, but this machine has [\d.]+ GiB free/);
      assert.doesNotThrow(
        () => assertFits({ info: { name: 'torch', device: 'cuda:0 (GPU)', dtype: 'bfloat16' } } as ComputeBackend, huge, 1, 512),
        'a GPU worker checks its own memory',
      );
    });
  });
});
