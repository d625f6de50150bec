/**
 * The torch backend computes what the tfjs backend computes: on svc-tiny (a plain llama GGUF),
 * with the same LoRA start and the same batches, loss, LoRA gradients and the first steps of a
 * run agree. svc's torch venv with real torch, transformers and PEFT; the tfjs path is the reference.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { initTf, tf } from '../../../engine/backend.js';
import { TfjsBackend } from '../../../engine/backends/tfjs.js';
import { startTorchBackend, type TorchBackend } from '../../../engine/backends/torch/index.js';
import type { LoraTensors, OptimizerSettings, TokenBatch } from '../../../engine/backends/types.js';
import { loadModelGguf, type LoadedModel } from '../../../engine/gguf/model-file.js';
import { initLoraTensors, loraAdapterFromTensors, loraSpec } from '../../../engine/lora.js';
import { SeededRandom } from '../../../engine/random.js';
import { lossAndGrads } from '../../../engine/train/step.js';
import { toTensors, disposeBatch } from '../../../engine/train/batches.js';
import { packageRoot } from '../../../sdk/packageRoot.js';
import { torchTestPython } from '../../support/torchStack.js';

const MODEL = path.join(packageRoot(), 'models', 'svc-tiny.gguf');
const LORA = { r: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
const OPTIMIZER: OptimizerSettings = { learningRate: 5e-3, beta1: 0.9, beta2: 0.999, epsilon: 1e-8, weightDecay: 0.01, maxGradNorm: 1 };

/** A padded batch of seeded token ids: the last row is shorter (padding carries no loss) and the first tokens carry none either. */
function randomBatch(seed: number, vocab: number, batchSize = 3, length = 24): TokenBatch {
  const random = new SeededRandom(seed);
  const size = batchSize * length;
  const inputs = new Int32Array(size);
  const targets = new Int32Array(size);
  const mask = new Float32Array(size);
  let tokens = 0;
  for (let row = 0; row < batchSize; row++) {
    const used = row === batchSize - 1 ? length - 7 : length;
    for (let t = 0; t < length; t++) {
      inputs[row * length + t] = random.int(vocab);
      targets[row * length + t] = random.int(vocab);
      if (t < used) tokens++;
      mask[row * length + t] = t < used && t >= 3 ? 1 : 0;
    }
  }
  return { batchSize, length, inputs, targets, mask, maskedTokens: mask.reduce((a, b) => a + b, 0), tokens };
}

/** The seeded LoRA start with B made nonzero too, so the gradients of A are not all zero. */
function loraStart(model: LoadedModel): LoraTensors {
  const { tensors } = initLoraTensors(model.config, LORA, 7);
  const random = new SeededRandom(8);
  for (const [name, m] of Object.entries(tensors)) if (name.endsWith('lora_b')) m.data = random.normalArray(m.data.length, 0.05);
  return tensors;
}

function maxAbs(a: Float32Array): number {
  return a.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
}

describe('torch backend parity with tfjs on svc-tiny', function () {
  this.timeout(120000);
  let model: LoadedModel;
  let torch: TorchBackend;

  before(async () => {
    await initTf();
    model = await loadModelGguf(MODEL);
    torch = await startTorchBackend({ python: torchTestPython(), dtype: 'float32' });
    await torch.loadBase(MODEL, model.config);
  });
  after(async () => {
    await torch?.dispose();
    for (const t of Object.values(model?.weights ?? {})) t.dispose();
  });

  it('loss and LoRA gradients of a batch match the tfjs reference', async () => {
    const start = loraStart(model);
    const spec = loraSpec(LORA);
    await torch.initLora(spec, start);
    const batch = randomBatch(3, model.config.vocabSize);
    const fromTorch = await torch.gradients(batch);

    const adapter = loraAdapterFromTensors({ ...LORA }, start);
    const tensors = toTensors(batch);
    const reference = lossAndGrads({ kind: 'lora', config: model.config, base: model.weights, adapter }, tensors);
    disposeBatch(tensors);

    assert.ok(Math.abs(fromTorch.loss - reference.loss) / reference.loss < 1e-5, `loss torch ${fromTorch.loss} vs tfjs ${reference.loss}`);
    assert.deepEqual(Object.keys(fromTorch.grads).sort(), Object.keys(reference.grads).sort());
    for (const [name, grad] of Object.entries(reference.grads)) {
      // tfjs keeps A as [in, r] and B as [r, out]: transpose to the seam's layout before comparing.
      const expected = tf.transpose(grad).dataSync() as Float32Array;
      const got = fromTorch.grads[name].data;
      const scale = maxAbs(expected);
      assert.ok(scale > 0, `${name}: reference gradient is zero`);
      let worst = 0;
      for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - expected[i]));
      assert.ok(worst / scale < 1e-4, `${name}: max |torch - tfjs| = ${worst} against max |grad| ${scale}`);
      grad.dispose();
    }
    for (const t of Object.values(adapter.weights)) t.dispose();
  });

  it('the first five steps of a run give the same losses and LoRA tensors as tfjs', async () => {
    const start = loraStart(model);
    const spec = loraSpec(LORA);
    await torch.initLora(spec, start);
    const tfjs = TfjsBackend.fromLoaded(model.config, model.weights);
    await tfjs.initLora(spec, start);
    const batches = [1, 2, 3, 4, 5].map((seed) => randomBatch(100 + seed, model.config.vocabSize));
    for (const [step, batch] of batches.entries()) {
      const a = await torch.trainStep(batch, OPTIMIZER);
      const b = await tfjs.trainStep(batch, OPTIMIZER);
      assert.ok(Math.abs(a.loss - b.loss) / b.loss < 1e-4, `step ${step + 1}: loss torch ${a.loss} vs tfjs ${b.loss}`);
      assert.ok(Math.abs(a.gradNorm - b.gradNorm) / b.gradNorm < 1e-3, `step ${step + 1}: grad norm torch ${a.gradNorm} vs tfjs ${b.gradNorm}`);
    }
    const after = await torch.loraTensors();
    const reference = await tfjs.loraTensors();
    for (const [name, m] of Object.entries(reference)) {
      assert.deepEqual(after[name].shape, m.shape);
      let worst = 0;
      for (let i = 0; i < m.data.length; i++) worst = Math.max(worst, Math.abs(after[name].data[i] - m.data[i]));
      // Five AdamW steps move an element by at most 5 · lr = 0.025. The two float32 engines sum in
      // different orders (and torch's BLAS differently again by thread count); Adam's m/√v turns a
      // last-bit difference in a near-zero gradient into a visible one, measured up to 1.6e-4. A
      // wrong formula is off by a step's size (≈ lr = 5e-3) or more: 2% of the whole move tells them apart.
      assert.ok(worst < 5e-4, `${name} after 5 steps: max |torch - tfjs| = ${worst}`);
      assert.ok(maxAbs(after[name].data.map((x, i) => x - start[name].data[i])) > 1e-3, `${name} did not move`);
    }
    // Not disposed: the tfjs backend here only borrows the loaded weights, which `after` frees.
    const evalBatch = randomBatch(9, model.config.vocabSize);
    const e1 = await torch.evalBatch(evalBatch);
    const e2 = await tfjs.evalBatch(evalBatch);
    assert.equal(e1.maskedTokens, e2.maskedTokens);
    assert.ok(Math.abs(e1.lossSum - e2.lossSum) / e2.lossSum < 1e-4, `eval loss sum torch ${e1.lossSum} vs tfjs ${e2.lossSum}`);
  });

  it('token accuracy: torch counts the masked tokens whose argmax is the target as tfjs does, whole or in slices', async () => {
    const start = loraStart(model);
    await torch.initLora(loraSpec(LORA), start);
    const tfjs = TfjsBackend.fromLoaded(model.config, model.weights);
    await tfjs.initLora(loraSpec(LORA), start);
    // Random targets are almost never the argmax: make every other masked target the model's own choice.
    const batch = randomBatch(11, model.config.vocabSize);
    for (let row = 0; row < batch.batchSize; row++) {
      for (let t = 0; t < batch.length; t += 2) {
        const i = row * batch.length + t;
        if (!batch.mask[i]) continue;
        const logits = await tfjs.logits(Array.from(batch.inputs.subarray(row * batch.length, i + 1)));
        batch.targets[i] = logits.reduce((best, v, j) => (v > logits[best] ? j : best), 0);
      }
    }
    const reference = await tfjs.evalBatch(batch);
    assert.ok(reference.correctTokens >= batch.maskedTokens / 2 - 1, `tfjs counts ${reference.correctTokens} of ${batch.maskedTokens}`);
    assert.equal((await torch.evalBatch(batch)).correctTokens, reference.correctTokens);
    const sliced = await startTorchBackend({ python: torchTestPython(), logitsChunkBytes: 4 * model.config.vocabSize * 10 });
    try {
      await sliced.loadBase(MODEL, model.config);
      await sliced.initLora(loraSpec(LORA), start);
      assert.equal((await sliced.evalBatch(batch)).correctTokens, reference.correctTokens, 'sliced, without gradients');
      assert.equal((await sliced.trainStep(batch, OPTIMIZER)).tokenAccuracy, reference.correctTokens / batch.maskedTokens, 'sliced, in the autograd op');
    } finally {
      await sliced.dispose();
    }
    assert.equal((await torch.trainStep(batch, OPTIMIZER)).tokenAccuracy, reference.correctTokens / batch.maskedTokens);
  });

  it('activation checkpointing and sliced logits change memory, not numbers: same loss and gradients', async () => {
    const start = loraStart(model);
    await torch.initLora(loraSpec(LORA), start);
    const batch = randomBatch(6, model.config.vocabSize);
    const plain = await torch.gradients(batch);
    const recomputing = await startTorchBackend({
      python: torchTestPython(),
      dtype: 'float32',
      checkpointActivations: true,
      logitsChunkBytes: 4 * model.config.vocabSize * 10,
    });
    try {
      await recomputing.loadBase(MODEL, model.config);
      await recomputing.initLora(loraSpec(LORA), start);
      const checkpointed = await recomputing.gradients(batch);
      assert.ok(Math.abs(checkpointed.loss - plain.loss) <= 1e-6 * plain.loss, `loss ${checkpointed.loss} vs ${plain.loss}`);
      for (const [name, g] of Object.entries(plain.grads)) {
        const worst = g.data.reduce((m, x, i) => Math.max(m, Math.abs(x - checkpointed.grads[name].data[i])), 0);
        // Float32 rounding only: the sliced loss computes softmax - onehot itself, autograd via log_softmax.
        assert.ok(worst <= 1e-5 * maxAbs(g.data), `${name}: max difference ${worst} against max |grad| ${maxAbs(g.data)}`);
      }
    } finally {
      await recomputing.dispose();
    }
  });

  it('bfloat16 compute (the path a GPU takes, here on CPU autocast) stays close to float32', async () => {
    const start = loraStart(model);
    await torch.initLora(loraSpec(LORA), start);
    const batch = randomBatch(6, model.config.vocabSize);
    const exact = await torch.gradients(batch);
    const reduced = await startTorchBackend({ python: torchTestPython(), dtype: 'bfloat16', logitsChunkBytes: 4 * model.config.vocabSize * 10 });
    try {
      await reduced.loadBase(MODEL, model.config);
      assert.equal(reduced.info.dtype, 'bfloat16');
      await reduced.initLora(loraSpec(LORA), start);
      const approx = await reduced.gradients(batch);
      assert.notEqual(approx.loss, exact.loss, 'bfloat16 gave bit-identical float32 results: was it used?');
      assert.ok(Math.abs(approx.loss - exact.loss) / exact.loss < 1e-2, `loss bf16 ${approx.loss} vs f32 ${exact.loss}`);
      for (const [name, g] of Object.entries(exact.grads)) {
        const worst = g.data.reduce((m, x, i) => Math.max(m, Math.abs(x - approx.grads[name].data[i])), 0);
        assert.ok(worst < 0.15 * maxAbs(g.data), `${name}: bf16 gradient off by ${worst} against max |grad| ${maxAbs(g.data)}`);
      }
      // The LoRA matrices train in float32 whatever the base's dtype.
      await reduced.trainStep(batch, OPTIMIZER);
      const after = await reduced.loraTensors();
      assert.ok(Object.values(after).every((m) => m.data instanceof Float32Array && m.data.every(Number.isFinite)));
    } finally {
      await reduced.dispose();
    }
  });

  it('a batch with no masked tokens has loss 0 and changes nothing through its gradient', async () => {
    await torch.initLora(loraSpec(LORA), loraStart(model));
    const batch = randomBatch(4, model.config.vocabSize);
    batch.mask.fill(0);
    batch.maskedTokens = 0;
    const { loss, grads } = await torch.gradients(batch);
    assert.equal(loss, 0);
    for (const [name, g] of Object.entries(grads)) assert.equal(maxAbs(g.data), 0, name);
    assert.deepEqual(await torch.evalBatch(batch), { lossSum: 0, maskedTokens: 0, correctTokens: 0 });
  });
});
