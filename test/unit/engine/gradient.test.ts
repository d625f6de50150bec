/**
 * Finite-difference checks of the analytic gradients (tfjs autodiff through our custom matmul
 * gradient, RoPE, attention, RMSNorm, SwiGLU, masked loss), for base weights and LoRA A/B.
 */
import assert from 'node:assert/strict';
import { initTf, tf } from '../../../engine/backend.js';
import { initLora, type LoraAdapter } from '../../../engine/lora.js';
import { TEST_TINY, type ModelConfig } from '../../../engine/model/config.js';
import { maskedLoss } from '../../../engine/model/forward.js';
import { weightShapes, type ModelWeights } from '../../../engine/model/weights.js';
import { SeededRandom } from '../../../engine/random.js';
import { makeBatch } from '../../../engine/train/batches.js';
import { lossAndGrads, type TrainTarget } from '../../../engine/train/step.js';
import { renderChat } from '../../../engine/tokenizer.js';

const config = TEST_TINY;
// Small enough that the central difference's truncation error stays inside the tolerance on the
// curvier qwen2 shape (1e-2 was 5% off there), large enough for float32 round-off.
const EPS = 4e-3;

/** The other families' pieces on the same toy size: GQA, NEOX RoPE, biases, q/k norms, tied output, Llama 3 factors. */
const QWEN3_LIKE: ModelConfig = {
  ...TEST_TINY,
  architecture: 'qwen3',
  headCount: 4,
  headCountKv: 2,
  headDim: 6,
  ropeStyle: 'neox',
  qkNorm: true,
  tiedOutput: true,
};
const QWEN2_LIKE: ModelConfig = { ...TEST_TINY, architecture: 'qwen2', headCount: 2, headCountKv: 1, ropeStyle: 'neox', attentionBias: true };
const LLAMA3_LIKE: ModelConfig = { ...TEST_TINY, headCountKv: 1, ropeFreqFactors: true, ropeFreqScale: 0.5 };

/** Larger-than-init random weights so every path (attention, gating) has sizeable gradients. */
function randomWeights(seed: number, config: ModelConfig = TEST_TINY): ModelWeights {
  const random = new SeededRandom(seed);
  const weights: ModelWeights = {};
  for (const [name, shape] of weightShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const gain = name.endsWith('norm.weight') || name === 'rope_freqs.weight';
    const values = random.normalArray(size, gain ? 0.2 : 0.4);
    if (gain) for (let i = 0; i < size; i++) values[i] += 1;
    weights[name] = tf.tensor(values, shape);
  }
  return weights;
}

function batchOf() {
  const chats = [
    [
      { role: 'user' as const, content: 'abc' },
      { role: 'assistant' as const, content: 'defgh' },
    ],
    [
      { role: 'user' as const, content: 'hello there' },
      { role: 'assistant' as const, content: 'hi!' },
    ],
  ];
  return makeBatch(chats.map((c) => renderChat(c)));
}

/** Central difference of the loss along one coordinate of one trainable tensor. */
function numericGradient(lossFor: (params: Record<string, tf.Tensor>) => tf.Scalar, params: Record<string, tf.Tensor>, name: string, index: number): number {
  const original = params[name].dataSync();
  const evalAt = (delta: number) => {
    const values = Float32Array.from(original);
    values[index] += delta;
    const shifted = { ...params, [name]: tf.tensor(values, params[name].shape) };
    const loss = tf.tidy(() => lossFor(shifted).dataSync()[0]);
    shifted[name].dispose();
    return loss;
  };
  return (evalAt(EPS) - evalAt(-EPS)) / (2 * EPS);
}

function checkGradients(
  target: TrainTarget,
  lossFor: (p: Record<string, tf.Tensor>) => tf.Scalar,
  params: Record<string, tf.Tensor>,
  batch: ReturnType<typeof batchOf>,
) {
  const { grads } = lossAndGrads(target, batch);
  const random = new SeededRandom(42);
  let checked = 0;
  for (const name of Object.keys(params)) {
    const analytic = grads[name].dataSync();
    // Two coordinates per tensor: the largest-gradient one (a strong signal) and a random one.
    let largest = 0;
    for (let i = 1; i < analytic.length; i++) if (Math.abs(analytic[i]) > Math.abs(analytic[largest])) largest = i;
    for (const index of [largest, random.int(analytic.length)]) {
      const numeric = numericGradient(lossFor, params, name, index);
      const tolerance = 2e-3 + 0.05 * Math.abs(numeric);
      assert.ok(Math.abs(numeric - analytic[index]) <= tolerance, `${name}[${index}]: analytic ${analytic[index]} vs numeric ${numeric}`);
      checked++;
    }
    grads[name].dispose();
  }
  assert.ok(checked >= 2 * Object.keys(params).length);
}

describe('engine gradients (finite differences)', function () {
  this.timeout(60000);
  before(async () => {
    await initTf();
  });

  it('matches for every base-model weight tensor', () => {
    const weights = randomWeights(1);
    const batch = batchOf();
    const target: TrainTarget = { kind: 'full', config, weights };
    checkGradients(target, (p) => maskedLoss(config, p, batch.inputs, batch.targets, batch.mask), weights, batch);
  });

  it('matches for LoRA A and B on every target module', () => {
    const base = randomWeights(2);
    const adapter: LoraAdapter = initLora(
      config,
      { r: 2, alpha: 4, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] },
      3,
    );
    // B starts at zero, which would make A's gradient zero; use random B to test both.
    const random = new SeededRandom(4);
    for (const name of Object.keys(adapter.weights)) {
      if (!name.endsWith('lora_b')) continue;
      const [rows, cols] = adapter.weights[name].shape as [number, number];
      adapter.weights[name] = tf.tensor(random.normalArray(rows * cols, 0.5), [rows, cols]);
    }
    const batch = batchOf();
    const target: TrainTarget = { kind: 'lora', config, base, adapter };
    checkGradients(target, (p) => maskedLoss(config, base, batch.inputs, batch.targets, batch.mask, { ...adapter, weights: p }), adapter.weights, batch);
  });

  for (const [family, shape] of [
    ['qwen3', QWEN3_LIKE],
    ['qwen2', QWEN2_LIKE],
    ['llama 3', LLAMA3_LIKE],
  ] as const) {
    it(`matches for LoRA A and B on a ${family}-shaped model`, () => {
      const base = randomWeights(5, shape);
      const adapter = initLora(shape, { r: 2, alpha: 4, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'down_proj'] }, 6);
      const random = new SeededRandom(7);
      for (const name of Object.keys(adapter.weights)) {
        if (!name.endsWith('lora_b')) continue;
        const [rows, cols] = adapter.weights[name].shape as [number, number];
        adapter.weights[name] = tf.tensor(random.normalArray(rows * cols, 0.5), [rows, cols]);
      }
      const batch = batchOf();
      const target: TrainTarget = { kind: 'lora', config: shape, base, adapter };
      checkGradients(target, (p) => maskedLoss(shape, base, batch.inputs, batch.targets, batch.mask, { ...adapter, weights: p }), adapter.weights, batch);
    });
  }
});
