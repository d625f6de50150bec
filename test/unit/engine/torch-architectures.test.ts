/**
 * The torch backend matches the tfjs reference on the architecture differences svc-tiny does not
 * exercise: qwen2 (NEOX RoPE, q/k/v biases, tied output), qwen3 (q/k RMSNorm, head width from
 * key_length), grouped-query attention, Llama 3 frequency factors and linear RoPE scaling. Each
 * model is a small random one written to a GGUF with engine/gguf/writer.ts.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { initTf, tf } from '../../../engine/backend.js';
import { TfjsBackend } from '../../../engine/backends/tfjs.js';
import { startTorchBackend, type TorchBackend } from '../../../engine/backends/torch/index.js';
import type { OptimizerSettings, TokenBatch } from '../../../engine/backends/types.js';
import { modelMetadata, toGgufTensor } from '../../../engine/gguf/model-file.js';
import { writeGgufFile } from '../../../engine/gguf/writer.js';
import { initLoraTensors, loraAdapterFromTensors, loraSpec } from '../../../engine/lora.js';
import { llamaConfig, type ModelConfig } from '../../../engine/model/config.js';
import { disposeWeights, initWeights, isLinearWeight, weightShapes, type ModelWeights } from '../../../engine/model/weights.js';
import { SeededRandom } from '../../../engine/random.js';
import { disposeBatch, toTensors } from '../../../engine/train/batches.js';
import { lossAndGrads } from '../../../engine/train/step.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { torchTestPython } from '../../support/torchStack.js';

const SIZES = { vocabSize: 300, contextLength: 64, embeddingLength: 32, blockCount: 2, headCount: 4, feedForwardLength: 48 };
const VARIANTS: Record<string, ModelConfig> = {
  qwen2: llamaConfig({
    ...SIZES,
    name: 'tiny-qwen2',
    architecture: 'qwen2',
    ropeStyle: 'neox',
    attentionBias: true,
    tiedOutput: true,
    headCountKv: 2,
    ropeFreqBase: 1e6,
    rmsNormEpsilon: 1e-6,
  }),
  qwen3: llamaConfig({ ...SIZES, name: 'tiny-qwen3', architecture: 'qwen3', ropeStyle: 'neox', qkNorm: true, headDim: 16, headCountKv: 1 }),
  'llama 3 (GQA, frequency factors, linear scaling)': llamaConfig({
    ...SIZES,
    name: 'tiny-llama3',
    headCountKv: 2,
    ropeFreqFactors: true,
    ropeFreqScale: 0.5,
    ropeFreqBase: 500000,
  }),
};
const LORA = { r: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
const OPTIMIZER: OptimizerSettings = { learningRate: 1e-2, beta1: 0.9, beta2: 0.99, epsilon: 1e-8, weightDecay: 0.1, maxGradNorm: 0.5 };

/**
 * Random weights large enough that attention is far from uniform (so RoPE and its variants change
 * the loss), with norms, biases and frequency factors away from their neutral 1 and 0.
 */
function randomWeights(config: ModelConfig, seed: number): ModelWeights {
  const random = new SeededRandom(seed);
  const weights = initWeights(config, seed);
  for (const [name, shape] of weightShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    let values: Float32Array;
    if (name.endsWith('norm.weight')) values = Float32Array.from({ length: size }, () => 0.5 + random.next());
    else if (name === 'rope_freqs.weight') values = Float32Array.from({ length: size }, () => 1 + 7 * random.next());
    else values = random.normalArray(size, name.endsWith('.bias') ? 0.5 : 0.25);
    weights[name].dispose();
    weights[name] = tf.tensor(values, shape);
  }
  return weights;
}

function randomBatch(seed: number, vocab: number, batchSize = 2, length = 20): TokenBatch {
  const random = new SeededRandom(seed);
  const size = batchSize * length;
  const inputs = Int32Array.from({ length: size }, () => random.int(vocab));
  const targets = Int32Array.from({ length: size }, () => random.int(vocab));
  const mask = Float32Array.from({ length: size }, (_, i) => (i % length >= 2 ? 1 : 0));
  return { batchSize, length, inputs, targets, mask, maskedTokens: mask.reduce((a, b) => a + b, 0), tokens: size };
}

describe('torch backend parity with tfjs across architectures', function () {
  this.timeout(120000);
  let dir: TempDir;
  let torch: TorchBackend;

  before(async () => {
    await initTf();
    dir = await createTempDir('torch-arch');
    torch = await startTorchBackend({ python: torchTestPython(), dtype: 'float32' });
  });
  after(async () => {
    await torch?.dispose();
    await dir?.remove();
  });

  for (const [label, config] of Object.entries(VARIANTS)) {
    it(`${label}: loss, LoRA gradients and three AdamW steps agree`, async () => {
      const weights = randomWeights(config, 11);
      const file = path.join(dir.path, `${config.name}.gguf`);
      const tensors = weightShapes(config).map(([name]) => toGgufTensor(name, weights[name], isLinearWeight(name)));
      await writeGgufFile(file, { metadata: new Map(modelMetadata(config)), tensors });
      await torch.loadBase(file, config);

      const { tensors: start } = initLoraTensors(config, LORA, 3);
      const random = new SeededRandom(4);
      for (const [name, m] of Object.entries(start)) if (name.endsWith('lora_b')) m.data = random.normalArray(m.data.length, 0.1);
      await torch.initLora(loraSpec(LORA), start);

      const batch = randomBatch(5, config.vocabSize);
      const fromTorch = await torch.gradients(batch);
      const adapter = loraAdapterFromTensors(LORA, start);
      const packed = toTensors(batch);
      const reference = lossAndGrads({ kind: 'lora', config, base: weights, adapter }, packed);
      disposeBatch(packed);
      disposeWeights(adapter.weights);
      assert.ok(Math.abs(fromTorch.loss - reference.loss) / reference.loss < 1e-5, `loss torch ${fromTorch.loss} vs tfjs ${reference.loss}`);
      for (const [name, grad] of Object.entries(reference.grads)) {
        const expected = tf.transpose(grad).dataSync() as Float32Array;
        grad.dispose();
        const scale = expected.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
        const got = fromTorch.grads[name].data;
        const worst = got.reduce((m, x, i) => Math.max(m, Math.abs(x - expected[i])), 0);
        assert.ok(scale > 0 && worst / scale < 1e-4, `${name}: max |torch - tfjs| = ${worst} against max |grad| ${scale}`);
      }

      const tfjs = TfjsBackend.fromLoaded(config, weights);
      await tfjs.initLora(loraSpec(LORA), start);
      for (let step = 1; step <= 3; step++) {
        const b = randomBatch(20 + step, config.vocabSize);
        const [x, y] = [await torch.trainStep(b, OPTIMIZER), await tfjs.trainStep(b, OPTIMIZER)];
        assert.ok(Math.abs(x.loss - y.loss) / y.loss < 1e-4, `step ${step}: loss torch ${x.loss} vs tfjs ${y.loss}`);
      }
      await tfjs.dispose();
    });
  }
});
