/**
 * A Hugging Face folder's base read from its own safetensors is the model its converted GGUF
 * holds, under the same names: one LoRA in the seam's layout (GGUF names and row order, what
 * adapter.gguf and the PEFT export are written from) gives the same logits on either, per
 * architecture (llama: the q/k rows llama.cpp's converter permuted; Gemma 3 and 4: their own
 * layer layouts). So an adapter trained from the folder serves on the GGUF.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTorchBackend, type TorchBackend } from "../../engine/backends/torch/index.js";
import type { TorchRanks } from "../../engine/backends/torch/ranks.js";
import { readModelConfig } from "../../engine/gguf/model-file.js";
import { convertHfFolder } from "../../engine/hf/convert.js";
import { inspectHfFolder } from "../../engine/hf/hfFolder.js";
import { DEFAULT_TARGET_MODULES, initLoraTensors, loraSpec } from "../../engine/lora.js";
import { buildHfFolder, buildHfTestGguf, buildHfTestModel, TINY_HF_LLAMA } from "../support/hfTestModels.js";
import { requireTorchStack, startExactTorchBackend, torchTestPython } from "../support/torchStack.js";

const LLAMA = TINY_HF_LLAMA;

describe("torch backend: a Hugging Face base from safetensors is its GGUF's model", function () {
  this.timeout(600_000);
  let scratch: string;

  before(async function () {
    await requireTorchStack(this);
    scratch = mkdtempSync(path.join(os.tmpdir(), "svc-hf-st-"));
  });
  after(() => scratch && rmSync(scratch, { recursive: true, force: true }));

  const models: Array<{ arch: string; build: () => Promise<{ folder: string; gguf: string }> }> = [
    {
      arch: "llama",
      build: async () => {
        const folder = await buildHfFolder(LLAMA);
        const gguf = path.join(scratch, "llama.gguf");
        await convertHfFolder(await inspectHfFolder(folder), gguf, { python: torchTestPython(), outType: "f32" });
        return { folder, gguf };
      },
    },
    { arch: "gemma3", build: async () => ({ folder: await buildHfTestModel({ arch: "gemma3" }), gguf: await buildHfTestGguf({ arch: "gemma3" }) }) },
    { arch: "gemma4", build: async () => ({ folder: await buildHfTestModel({ arch: "gemma4" }), gguf: await buildHfTestGguf({ arch: "gemma4" }) }) },
  ];

  for (const { arch, build } of models) {
    it(`${arch}: one seam LoRA gives the same logits from the folder and from the GGUF (float32, 1e-4 of the largest)`, async () => {
      const { folder, gguf } = await build();
      const config = await readModelConfig(gguf);
      const ids = [2, 9707, 11, 1879, 0, 1234, 872, 198];
      const lora = { r: 4, alpha: 8, targetModules: DEFAULT_TARGET_MODULES };
      const run = async (hfFolder?: string) => {
        const backend: TorchBackend = await startExactTorchBackend();
        try {
          await backend.loadBase(gguf, config, undefined, { hfFolder });
          const { tensors } = initLoraTensors(config, lora, 5, backend.projectionShapes);
          // B as training leaves it (not zero), distinct per row, so a row put in the wrong order shows.
          for (const [name, t] of Object.entries(tensors))
            if (name.endsWith("lora_b")) t.data.forEach((_, i) => (t.data[i] = Math.sin(i * 0.37 + name.length) * 0.05));
          await backend.initLora(loraSpec(lora), tensors);
          return { logits: await backend.logits(ids), source: backend.baseSource };
        } finally {
          await backend.dispose();
        }
      };
      const fromGguf = await run();
      const fromFolder = await run(folder);
      assert.equal(fromFolder.source, `the Hugging Face safetensors in ${folder}`);
      assert.equal(fromFolder.logits.length, fromGguf.logits.length);
      let scale = 0;
      let worst = 0;
      fromGguf.logits.forEach((x, i) => {
        scale = Math.max(scale, Math.abs(x));
        worst = Math.max(worst, Math.abs(x - fromFolder.logits[i]));
      });
      assert.ok(worst <= 1e-4 * scale, `max |folder - GGUF| = ${worst} against max |logit| ${scale}`);
    });
  }

  it("llama under FSDP: two ranks, each reading its shard of the folder's safetensors, give one process's logits", async () => {
    const { folder, gguf } = await models[0].build();
    const config = await readModelConfig(gguf);
    const ids = [2, 9707, 11, 1879, 0, 1234, 872, 198];
    const lora = { r: 4, alpha: 8, targetModules: DEFAULT_TARGET_MODULES };
    const run = async (ranks?: TorchRanks) => {
      const backend = await startTorchBackend({ python: torchTestPython(), threads: 1, dtype: "float32", ranks });
      try {
        await backend.loadBase(gguf, config, undefined, { hfFolder: folder });
        const { tensors } = initLoraTensors(config, lora, 5, backend.projectionShapes);
        for (const [name, t] of Object.entries(tensors))
          if (name.endsWith("lora_b")) t.data.forEach((_, i) => (t.data[i] = Math.sin(i * 0.37 + name.length) * 0.05));
        await backend.initLora(loraSpec(lora), tensors);
        return { logits: await backend.logits(ids), held: backend.rankParameterBytes };
      } finally {
        await backend.dispose();
      }
    };
    const one = await run();
    const two = await run({ perNode: 2, backend: "gloo", strategy: "fsdp" });
    assert.ok(two.held < one.held, `rank 0 holds ${two.held} bytes of parameters, one process ${one.held}`);
    let scale = 0;
    let worst = 0;
    one.logits.forEach((x, i) => {
      scale = Math.max(scale, Math.abs(x));
      worst = Math.max(worst, Math.abs(x - two.logits[i]));
    });
    assert.ok(worst <= 1e-5 * scale, `max |FSDP - one process| = ${worst} against max |logit| ${scale}`);
  });
});
