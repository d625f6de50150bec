// Gemma 3 and Gemma 4 (text) as the torch backend will meet them: a Hugging Face folder and the
// GGUF llama.cpp's own converter makes of it. Random weights, real architectures, real vocabulary
// (test/support/hfTestModels.ts). Checks, per architecture, in float32:
//   - llama.cpp on the GGUF gives transformers' next-token distribution on the folder;
//   - svc's torch backend on the GGUF gives the folder's logits: transformers 5.18's GGUF reader
//     alone gets Gemma 3's attention scale, layer pattern and local RoPE base wrong, refuses Gemma 4
//     E2B/E4B-shaped files and loads no buffers (Gemma 4's layer_scalar); svc_torch/gguf_base.py
//     completes the config from llama.cpp's keys;
//   - a LoRA trained on the torch backend teaches a fixed continuation that llama.cpp produces
//     from the exported GGUF adapter on the unmodified base.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { buildHfTestGguf, buildHfTestModel, hfTestPython, transformersLogits, type HfTestArch } from '../../support/hfTestModels.js';
import { compareWithReference, disposeLlamaCppReference, greedy, logProbabilities, tokenize } from '../../support/llamaCppReference.js';
import path from 'node:path';
import { readModelConfig } from '../../../engine/gguf/model-file.js';
import { testModelsDir } from '../../support/testModels.js';
import { sharedExactTorchBackend } from '../../support/torchStack.js';
import { teachAnswerOnTorch } from '../../support/torchTeach.js';

// Log-probabilities over tokens llama.cpp gives at least e^-30 (compareWithReference). Both run in
// float32 with an F32 KV cache; what is left is ggml's GELU, which looks its input up in a
// float16 table, and summation order. A wrong attention scale or RoPE moves them by whole units.
const LLAMA_CPP_TOLERANCE = 0.02;
// The same engine on the same float32 weights: only a wrong config or tensor shows.
const SAME_ENGINE_TOLERANCE = 1e-4;

// Longer than the sliding window (8), so sliding and global layers see different contexts.
const PROMPT = 'The quick brown fox jumps over the lazy dog, then naps in the warm afternoon sun by the river.';

const available = existsSync(hfTestPython());

describe('Gemma GGUF reference: llama.cpp and transformers agree on random-weight Gemma models', function () {
  this.timeout(900_000);

  before(function () {
    // Offline machines without svc's torch venv skip; CI has it and must run these.
    if (!available && process.env.CI !== 'true') this.skip();
  });

  after(async () => {
    await disposeLlamaCppReference();
  });
  // One torch process for every check below: each loads its GGUF into it first.
  const torchBackend = sharedExactTorchBackend();

  for (const arch of ['gemma3', 'gemma4'] as HfTestArch[]) {
    describe(arch, () => {
      let folder: string;
      let gguf: string;
      let tokens: number[];
      let hfLogits: Float64Array;

      before(async () => {
        folder = await buildHfTestModel({ arch });
        gguf = await buildHfTestGguf({ arch });
        tokens = [2, ...(await tokenize(gguf, PROMPT))]; // <bos> first, as Gemma is trained
        assert.ok(tokens.length > 16, `prompt is ${tokens.length} tokens, not longer than two sliding windows`);
        hfLogits = await transformersLogits(folder, tokens);
      });

      it("llama.cpp on the converted GGUF gives transformers' next-token log-probabilities on the HF folder", async () => {
        const reference = await logProbabilities(gguf, tokens);
        const { maxDiff, at, sameArgmax } = compareWithReference(hfLogits, reference);
        console.log(`      ${arch}: max |log p(llama.cpp) - log p(transformers)| = ${maxDiff.toExponential(2)} at token ${at}`);
        assert.ok(sameArgmax, 'argmax differs');
        assert.ok(maxDiff < LLAMA_CPP_TOLERANCE, `max difference ${maxDiff} at token ${at} is over ${LLAMA_CPP_TOLERANCE}`);
      });

      it("svc's torch backend on the GGUF gives the HF folder's logits", async () => {
        const backend = await torchBackend();
        await backend.loadBase(gguf, await readModelConfig(gguf));
        const fromGguf = await backend.logits(tokens);
        let maxDiff = 0;
        for (let i = 0; i < hfLogits.length; i++) maxDiff = Math.max(maxDiff, Math.abs(fromGguf[i] - hfLogits[i]));
        console.log(`      ${arch}: max |logit(svc torch on GGUF) - logit(HF)| = ${maxDiff.toExponential(2)}`);
        assert.ok(maxDiff < SAME_ENGINE_TOLERANCE, `max logit difference ${maxDiff} is over ${SAME_ENGINE_TOLERANCE}`);
      });

      it('a LoRA trained on torch teaches a continuation that llama.cpp gives with the exported GGUF adapter', async () => {
        const answer = (await tokenize(gguf, ' purple elephants dance')).slice(0, 4);
        const prompt = tokens.slice(0, 12);
        const before = await greedy(gguf, prompt, answer.length);
        assert.notDeepEqual(before, answer, 'the base model already continues with the answer');
        const adapterPath = path.join(await testModelsDir(), `${arch}-taught.adapter.gguf`); // not beside the GGUF: that folder is shared
        await teachAnswerOnTorch(await torchBackend(), gguf, { prompt, answer, adapterPath, label: arch, maxSteps: 60, stopBelow: 0.05 });
        assert.deepEqual(await greedy(gguf, prompt, answer.length, { lora: adapterPath }), answer);
      });
    });
  }
});
