/**
 * A quantised GGUF base kept quantised in the torch backend's memory (svc_torch/quantized.py):
 * projections stay Q8_0 / Q4_K / Q6_K blocks and are dequantised per layer in the forward and
 * backward pass; the embedding table and output head stay blocks too (a lookup dequantises the rows
 * it reads, the loss a slice of the head's rows at a time). Random-weight llama models (llama: its
 * q/k rows are permuted in the file, so the blocks are reordered too) around Llama 2's vocabulary,
 * quantised by svc's port of ggml's reference quantisers: one all Q8_0, one mixed as llama.cpp's
 * Q4_K_M mixes (Q4_K, ffn_down Q6_K); and a Qwen3 model whose output is tied to its Q8_0 embedding.
 *
 *   - the torch dequantisers give gguf-py's floats bit for bit on every block of both files;
 *   - PEFT wraps QuantizedLinear as a LoRA Linear, its LoRA and input gradients match an
 *     nn.Linear holding the dequantised weight, and autograd saves no weight-sized tensor;
 *   - the backend keeps every quantised projection and table (and says so), with the logits, the
 *     loss and the LoRA gradients of the dequantised load;
 *   - a LoRA trained on the kept base teaches an answer llama.cpp gives with the exported GGUF
 *     adapter on the same quantised file.
 * Needs svc's torch venv (skipped without it, failed in CI).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { torchPythonPath } from '../../../engine/backends/torch/paths.js';
import { readModelConfig } from '../../../engine/gguf/model-file.js';
import { DEFAULT_TARGET_MODULES, initLoraTensors, loraSpec } from '../../../engine/lora.js';
import { writeGgufFile } from '../../../engine/gguf/writer.js';
import { disposeLlamaCppReference, greedy, tokenize } from '../../support/llamaCppReference.js';
import { testModelFile, testModelsDir, type TestModelOptions } from '../../support/testModels.js';
import { startExactTorchBackend, torchTestPython } from '../../support/torchStack.js';
import { teachAnswerOnTorch } from '../../support/torchTeach.js';

const run = promisify(execFile);
const Q6_K = 14;

// Same weights, same float32 matmuls: only the route of the weight into them differs.
const SAME_WEIGHTS_TOLERANCE = 1e-5;
// LoRA and input gradients of QuantizedLinear against nn.Linear on the dequantised weight, relative to the largest.
const GRADIENT_TOLERANCE = 1e-5;
// The loss over the head a slice of rows at a time (a running log-sum-exp) against one softmax: float32 summation order.
const LOSS_TOLERANCE = 1e-5;
const HEAD_SLICE_ROWS = 3001;

const MODELS: Record<string, { options: TestModelOptions; q6kDown?: boolean; types: string[]; tables: string[] }> = {
  'llama Q8_0': {
    options: { arch: 'llama', vocab: 'llama-spm', weightType: 'Q8_0', name: 'kept-q8_0' },
    types: ['Q8_0'],
    tables: ['output.weight', 'token_embd.weight'],
  },
  // d = 256 so every matrix fills whole K-quant blocks; ffn_down in Q6_K as Q4_K_M stores some layers'.
  'llama Q4_K_M (Q4_K, ffn_down Q6_K)': {
    options: { arch: 'llama', vocab: 'llama-spm', weightType: 'Q4_K', embeddingLength: 256, headCount: 4, headDim: 64, name: 'kept-q4_k_m' },
    q6kDown: true,
    types: ['Q4_K', 'Q6_K'],
    tables: ['output.weight', 'token_embd.weight'],
  },
  // Qwen3-0.6B's layout: no output.weight, the head reads the embedding's blocks.
  'qwen3 Q8_0, output tied to the embedding': {
    options: { arch: 'qwen3', vocab: 'qwen2', weightType: 'Q8_0', name: 'kept-qwen3-q8_0' },
    types: ['Q8_0'],
    tables: ['token_embd.weight'],
  },
};

async function writeModel(options: TestModelOptions, q6kDown: boolean): Promise<string> {
  const file = await testModelFile(options);
  const tensors = q6kDown ? file.tensors.map((t) => (t.name.endsWith('ffn_down.weight') ? { ...t, type: Q6_K } : t)) : file.tensors;
  const target = path.join(await testModelsDir(), `${options.name}.gguf`);
  await writeGgufFile(target, { metadata: file.metadata, tensors });
  return target;
}

async function pythonCheck(mode: 'dequant' | 'linear' | 'slices' | 'loss', files: string[]): Promise<Record<string, any>> {
  const script = path.join(import.meta.dirname, 'torch-quantized.py');
  const { stdout } = await run(torchTestPython(), [script, mode, ...files], {
    env: { ...process.env, PYTHONPATH: torchPythonPath() },
    maxBuffer: 1 << 24,
  });
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

const available = existsSync(torchTestPython());

/** Whether a C compiler is on PATH: svc_torch builds its native dequantiser with it. */
function hasCCompiler(): boolean {
  const dirs = (process.env.PATH ?? '').split(path.delimiter);
  return ['cc', 'gcc', 'clang'].some((name) => dirs.some((dir) => existsSync(path.join(dir, name))));
}

describe('torch backend: a quantised GGUF base kept quantised in memory', function () {
  this.timeout(600_000);
  const files: Record<string, string> = {};

  before(async function () {
    if (!available && process.env.CI !== 'true') this.skip();
    for (const [label, { options, q6kDown }] of Object.entries(MODELS)) files[label] = await writeModel(options, q6kDown ?? false);
  });
  after(disposeLlamaCppReference);

  it("the torch and native dequantisers give gguf-py's floats bit for bit (Q8_0, Q4_K, Q6_K)", async () => {
    // ggml-quants.c's reference port (gguf-py's numpy) is what the dequantisers are checked against; the
    // file's blocks are real ones (svc's quantisers match gguf-py's where it has one: gguf-quant.test.ts).
    const result = await pythonCheck('dequant', Object.values(files));
    console.log(`      checked ${JSON.stringify(result.checked)} values; ${result.native}`);
    // The native one is built wherever a C compiler is (scripts/setup-system.sh installs one).
    if (process.env.CI === 'true' || hasCCompiler()) assert.match(result.native, /^native dequantiser built by /);
    assert.deepEqual(result.mismatches, []);
    for (const type of ['Q8_0', 'Q4_K', 'Q6_K']) assert.ok(result.checked[type] > 0, `no ${type} tensor was checked`);
  });

  it('large tensors (the embeddings) dequantised a slice of rows at a time load the same model', async () => {
    const result = await pythonCheck('slices', [files['llama Q8_0']]);
    assert.ok(result.parameters > 0);
    assert.deepEqual(result.differ, []);
  });

  it("the vocabulary-sliced loss of a kept head, its first pass's logits kept or recomputed, is cross-entropy's", async () => {
    const result = await pythonCheck('loss', []);
    for (const [softcap, runs] of Object.entries(result))
      for (const [name, r] of Object.entries(runs as Record<string, any>)) {
        assert.ok(r.lossError < LOSS_TOLERANCE, `${softcap} ${name}: loss error ${r.lossError}`);
        assert.ok(r.gradError < GRADIENT_TOLERANCE, `${softcap} ${name}: gradient error ${r.gradError}`);
        assert.ok(r.correct[1] > 0, `${softcap}: no token predicted right, so accuracy went unchecked`);
        assert.equal(r.correct[0], r.correct[1], `${softcap} ${name}: tokens predicted right`);
        assert.ok(r.sameAsRecomputed, `${softcap} ${name}: differs from recomputing the logits`);
      }
  });

  for (const label of Object.keys(MODELS)) {
    describe(label, () => {
      it('PEFT wraps QuantizedLinear; its gradients match the dequantised weight; autograd saves no weight', async () => {
        const result = await pythonCheck('linear', [files[label]]);
        assert.ok(Object.keys(result).length > 0, 'no quantised projection in the file');
        for (const [type, r] of Object.entries(result)) {
          assert.ok(r.isLoraLinear, `${type}: PEFT wrapped it as ${r.wrapper}`);
          assert.equal(r.baseLayer, 'QuantizedLinear');
          assert.equal(r.loraDtype, 'torch.float32');
          for (const [name, error] of Object.entries(r.relativeError as Record<string, number>))
            assert.ok(error < GRADIENT_TOLERANCE, `${type} ${name}: relative gradient error ${error}`);
          // What the forward pass keeps: the input, the LoRA's own activations; never the weight.
          assert.ok(r.largestSaved < r.weightElements, `${type}: autograd saved a tensor of ${r.largestSaved} elements (weight ${r.weightElements})`);
          assert.ok(r.qweightBytes < r.weightElements * 1.1, `${type}: ${r.qweightBytes} bytes kept for ${r.weightElements} weights`);
          // Under activation checkpointing: forward, recompute and backward each dequantise, unless the
          // recomputed forward keeps its weight for the backward; the gradients are the same.
          assert.equal(r.checkpointed.recomputing.dequantizations, 3, `${type}: dequantisations without saving`);
          assert.equal(r.checkpointed.saving.dequantizations, 2, `${type}: dequantisations with the weight saved`);
          for (const mode of ['recomputing', 'saving'])
            assert.ok(
              r.checkpointed[mode].inputRelativeError < GRADIENT_TOLERANCE,
              `${type} ${mode}: input gradient error ${r.checkpointed[mode].inputRelativeError}`,
            );
        }
      });

      it("keeps every quantised projection and table, with the dequantised load's logits, loss and gradients", async () => {
        const gguf = files[label];
        const config = await readModelConfig(gguf);
        const prompt = await tokenize(gguf, 'The quick brown fox jumps over the lazy dog');
        const length = prompt.length - 1;
        const batch = {
          batchSize: 1,
          length,
          inputs: Int32Array.from(prompt.slice(0, -1)),
          targets: Int32Array.from(prompt.slice(1)),
          mask: Float32Array.from({ length }, (_, i) => (i % 3 === 1 ? 0 : 1)),
          maskedTokens: length - Math.floor((length + 1) / 3),
          tokens: length,
        };
        const runs: { logits: Float32Array; loss: number; grads: Record<string, Float32Array> }[] = [];
        // Kept with activation checkpointing too: its layers then hand dequantised weights to each other.
        const settings = [
          { quantizedBase: 'keep', checkpointActivations: false },
          { quantizedBase: 'keep', checkpointActivations: true },
          { quantizedBase: 'dequantize', checkpointActivations: false },
        ] as const;
        for (const { quantizedBase, checkpointActivations } of settings) {
          // The kept head in slices of 3001 vocabulary rows, so the running log-sum-exp crosses slices.
          const logitsChunkBytes = quantizedBase === 'keep' ? 4 * length * HEAD_SLICE_ROWS : undefined;
          const backend = await startExactTorchBackend({ quantizedBase, logitsChunkBytes, checkpointActivations });
          try {
            await backend.loadBase(gguf, config);
            if (quantizedBase === 'keep') {
              // 7 projections per block, all quantised in these files
              assert.equal(backend.quantizedProjections, 7 * config.blockCount);
              assert.deepEqual(backend.quantizedTypes, MODELS[label].types);
              assert.deepEqual(backend.quantizedTables, MODELS[label].tables);
              const by = hasCCompiler() ? 'the native dequantiser built by ' : 'the torch dequantisers';
              const notice = `${MODELS[label].types.join(', ')} weights kept quantised in memory, dequantised per layer by ${by}`;
              assert.ok(backend.weightsNotice?.startsWith(notice), `${backend.weightsNotice}`);
            } else assert.deepEqual([backend.quantizedProjections, backend.quantizedTables], [0, []]);
            const lora = { r: 4, alpha: 8, targetModules: DEFAULT_TARGET_MODULES };
            const { config: loraConfig, tensors } = initLoraTensors(config, lora, 5, backend.projectionShapes);
            // B starts at zero: give it values so the A gradients (through the head's gradient) are not zero too.
            for (const [name, tensor] of Object.entries(tensors))
              if (name.endsWith('lora_b')) tensor.data = Float32Array.from(tensor.data, (_, i) => Math.sin(i + name.length) * 0.05);
            await backend.initLora(loraSpec(loraConfig), tensors);
            const { loss, grads } = await backend.gradients(batch);
            runs.push({ logits: await backend.logits(prompt), loss, grads: Object.fromEntries(Object.entries(grads).map(([n, t]) => [n, t.data])) });
          } finally {
            await backend.dispose();
          }
        }
        const [kept, keptCheckpointed, dequantized] = runs;
        assert.equal(keptCheckpointed.loss, kept.loss, 'loss with checkpointing');
        for (const [name, values] of Object.entries(kept.grads)) {
          const differs = values.findIndex((value, i) => value !== keptCheckpointed.grads[name][i]);
          assert.equal(differs, -1, `${name}: gradient ${differs} differs with checkpointing`);
        }
        let maxDiff = 0;
        for (let i = 0; i < kept.logits.length; i++) maxDiff = Math.max(maxDiff, Math.abs(kept.logits[i] - dequantized.logits[i]));
        assert.ok(maxDiff < SAME_WEIGHTS_TOLERANCE, `max |logit(kept) - logit(dequantised)| = ${maxDiff}`);
        assert.ok(Math.abs(kept.loss - dequantized.loss) < LOSS_TOLERANCE * Math.abs(dequantized.loss), `loss ${kept.loss} vs ${dequantized.loss}`);
        for (const [name, expected] of Object.entries(dequantized.grads)) {
          const scale = expected.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
          const worst = expected.reduce((m, v, i) => Math.max(m, Math.abs(v - kept.grads[name][i])), 0);
          assert.ok(scale > 0 && worst <= GRADIENT_TOLERANCE * 10 * scale, `${name}: |Δgrad| ${worst} against ${scale}`);
        }
      });

      it('a LoRA trained on the kept base teaches an answer llama.cpp gives with the exported adapter on the same file', async () => {
        const gguf = files[label];
        const prompt = await tokenize(gguf, 'The quick brown fox jumps over');
        const answer = (await tokenize(gguf, 'purple elephants dance')).slice(0, 4);
        assert.notDeepEqual(await greedy(gguf, prompt, answer.length), answer, 'the base model already continues with the answer');
        const adapterPath = path.join(await testModelsDir(), `${path.basename(gguf, '.gguf')}-taught.adapter.gguf`);
        const backend = await startExactTorchBackend({ quantizedBase: 'keep' });
        try {
          await teachAnswerOnTorch(backend, gguf, { prompt, answer, adapterPath, label, maxSteps: 80, stopBelow: 0.02 });
          assert.ok(backend.quantizedProjections > 0);
        } finally {
          await backend.dispose();
        }
        assert.deepEqual(await greedy(gguf, prompt, answer.length, { lora: adapterPath }), answer);
      });
    });
  }
});
