/**
 * The torch backend against Hugging Face's implementation of the same architecture (issue 14,
 * "reference check"): for llama, qwen2 and qwen3 test models, the loss of a batch, the logits of a
 * sequence and the LoRA gradients of svc's torch backend equal those of transformers'
 * LlamaForCausalLM / Qwen2ForCausalLM / Qwen3ForCausalLM built from the same GGUF weights, with
 * svc's PEFT adapter loaded by PEFT itself (so the adapter format is checked by PEFT too).
 * Needs svc's torch venv (skipped without it, failed in CI). Tolerance: float32 on both sides, different summation orders:
 * 1e-4 relative on the loss, 1e-3 on logits and gradients (relative to their largest value).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { torchPythonPath } from '../../../engine/backends/torch/paths.js';
import type { LoraTensors, Matrix } from '../../../engine/backends/types.js';
import { writePeftAdapter } from '../../../engine/gguf/peft.js';
import { readModelConfig } from '../../../engine/gguf/model-file.js';
import { initLoraTensors, loraSpec } from '../../../engine/lora.js';
import { SeededRandom } from '../../../engine/random.js';
import { randomBatches } from '../../../engine/backends/torch/bench.js';
import { hfToGgufRows } from '../../support/hfLayout.js';
import { buildTestModel, type TestModelOptions } from '../../support/testModels.js';
import { createTempDir, type TempDir } from '../../support/tmp.js';
import { requireTorchStack, sharedExactTorchBackend, torchTestPython } from '../../support/torchStack.js';

const run = promisify(execFile);
const CASES: TestModelOptions[] = [
  { arch: 'llama', vocab: 'llama-spm' },
  { arch: 'qwen2', vocab: 'qwen2' },
  { arch: 'qwen3', vocab: 'qwen2' },
];
const LORA = { r: 4, alpha: 8, targetModules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] };
const HF_MODULE: Record<string, string> = {
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_output: 'self_attn.o_proj',
  ffn_gate: 'mlp.gate_proj',
  ffn_up: 'mlp.up_proj',
  ffn_down: 'mlp.down_proj',
};

/** LoRA with B away from zero too, so every gradient (A's included) is non-trivial. */
function nonZeroLora(tensors: LoraTensors, seed: number): LoraTensors {
  const random = new SeededRandom(seed);
  return Object.fromEntries(
    Object.entries(tensors).map(([name, m]) => [name, name.endsWith('lora_b') ? { shape: m.shape, data: random.normalArray(m.data.length, 0.05) } : m]),
  );
}

function maxAbs(values: ArrayLike<number>): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, Math.abs(values[i]));
  return max;
}
function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assert.equal(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

describe('torch backend vs Hugging Face transformers + PEFT', function () {
  this.timeout(300000);
  let tmp: TempDir;
  before(async function () {
    await requireTorchStack(this);
    tmp = await createTempDir('torch-hf');
  });
  after(async () => tmp?.remove());
  // One torch process for the cases: each loads its model (and a fresh adapter) into it.
  const torchBackend = sharedExactTorchBackend();

  for (const options of CASES) {
    it(`${options.arch}: loss, logits and LoRA gradients equal transformers' with svc's PEFT adapter`, async () => {
      const modelPath = await buildTestModel(options);
      const config = await readModelConfig(modelPath);
      const { config: lora, tensors: initial } = initLoraTensors(config, LORA, 5);
      const tensors = nonZeroLora(initial, 6);
      const adapterDir = path.join(tmp.path, options.arch);
      await mkdir(adapterDir, { recursive: true });
      await writePeftAdapter(
        { safetensors: path.join(adapterDir, 'adapter_model.safetensors'), config: path.join(adapterDir, 'adapter_config.json') },
        tensors,
        lora,
        config,
        config.name,
      );
      const [batch] = randomBatches(config.vocabSize, 2, 12, 1, 9);
      batch.mask.fill(0, 0, 3); // a few untrained positions
      const requestPath = path.join(tmp.path, `${options.arch}-request.json`);
      await writeFile(
        requestPath,
        JSON.stringify({
          config,
          batchSize: batch.batchSize,
          length: batch.length,
          inputs: [...batch.inputs],
          targets: [...batch.targets],
          mask: [...batch.mask],
        }),
      );
      const script = path.join(import.meta.dirname, 'torch-hf-reference.py');
      const { stdout } = await run(torchTestPython(), [script, torchPythonPath(), modelPath, adapterDir, requestPath], {
        maxBuffer: 1 << 28,
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      });
      const hf = JSON.parse(stdout.trim().split('\n').pop()!) as { loss: number; lastLogits: number[]; grads: Record<string, number[]> };

      const backend = await torchBackend();
      await backend.loadBase(modelPath, config);
      await backend.initLora(loraSpec(lora), tensors);
      const ours = await backend.gradients(batch);
      assert.ok(Math.abs(ours.loss - hf.loss) < 1e-4 * Math.max(1, hf.loss), `loss: svc ${ours.loss}, transformers ${hf.loss}`);
      const logits = await backend.logits([...batch.inputs.subarray(0, batch.length)]);
      assert.ok(maxDiff(logits, hf.lastLogits) < 1e-3 * maxAbs(hf.lastLogits), 'last-position logits');
      for (const [name, grad] of Object.entries(ours.grads) as Array<[string, Matrix]>) {
        const [, block, linear, part] = /^blk\.(\d+)\.(\w+)\.weight\.lora_(a|b)$/.exec(name)!;
        const theirs = hf.grads[`base_model.model.model.layers.${block}.${HF_MODULE[linear]}.lora_${part.toUpperCase()}.weight`];
        assert.ok(theirs, `transformers has a gradient for ${name}`);
        const permuted = config.architecture === 'llama' && part === 'b' && (linear === 'attn_q' || linear === 'attn_k');
        const expected = permuted
          ? hfToGgufRows({ shape: grad.shape, data: Float32Array.from(theirs) }, linear === 'attn_q' ? config.headCount : config.headCountKv)
          : theirs;
        assert.ok(maxAbs(expected) > 0, `${name}: a non-zero gradient`);
        assert.ok(
          maxDiff(grad.data, expected) < 1e-3 * maxAbs(expected),
          `${name}: gradient differs by ${maxDiff(grad.data, expected)} (largest ${maxAbs(expected)})`,
        );
      }
    });
  }
});
