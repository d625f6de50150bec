import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { inspectGguf } from "../../../engine/gguf/inspect.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";
import { llamaCppSource } from "../../support/llamaCppSource.js";
import { writeTinyModel } from "../../support/modelFiles.js";

describe("inspectGguf as registration and discovery use it: the facts of small model files", () => {
  let tmp: TempDir;
  before(async () => {
    tmp = await createTempDir("gguf-facts");
  });
  after(async () => {
    await tmp?.remove();
  });

  it("reads architecture, name, parameters, quantization, context and chat template", async () => {
    const file = await writeTinyModel(path.join(tmp.path, "qwen.gguf"), {
      architecture: "qwen3",
      name: "Qwen3 0.6B",
      fileType: 15,
      contextLength: 40960,
      chatTemplate: "{{x}}",
    });
    assert.deepEqual(await inspectGguf(file.path), {
      architecture: "qwen3",
      name: "Qwen3 0.6B",
      parameters: file.parameters,
      quantization: "Q4_K_M",
      contextLength: 40960,
      sizeBytes: file.sizeBytes,
      hasChatTemplate: true,
      trainable: true,
    });
  });

  it("names the quantization after the weights' type when general.file_type is absent", async () => {
    const file = await writeTinyModel(path.join(tmp.path, "plain.gguf"), { architecture: "llama" });
    const facts = await inspectGguf(file.path);
    assert.equal(facts.quantization, "F32");
    assert.equal(facts.name, undefined);
    assert.equal(facts.hasChatTemplate, false);
  });

  it("svc-tiny, the shipped model, is a trainable llama", async () => {
    const facts = await inspectGguf(path.resolve(import.meta.dirname, "../../../models/svc-tiny.gguf"));
    assert.equal(facts.architecture, "llama");
    assert.equal(facts.contextLength, 160);
    assert.equal(facts.trainable, true);
  });

  it("reads a real header with a 151k-token vocabulary (llama.cpp's Qwen2 vocabulary file, no weights)", async function () {
    this.timeout(60_000);
    const facts = await inspectGguf(path.join(llamaCppSource(), "models", "ggml-vocab-qwen2.gguf"));
    assert.equal(facts.architecture, "qwen2");
    assert.equal(facts.contextLength, 32768);
    assert.equal(facts.hasChatTemplate, true);
    assert.equal(facts.parameters, 0);
    assert.equal(facts.trainable, false);
    assert.equal(facts.notTrainableReason, "the file has no weights (a vocabulary-only GGUF)");
  });

  it("another architecture is serve-only, with a one-line reason", async () => {
    const file = await writeTinyModel(path.join(tmp.path, "gemma.gguf"), { architecture: "gemma2", fileType: 15 });
    const facts = await inspectGguf(file.path);
    assert.equal(facts.trainable, false);
    assert.match(facts.notTrainableReason ?? "", /^[^\n]*gemma2[^\n]*svc trains llama, qwen2, qwen3, gemma3, gemma4 models$/);
  });

  it("refuses what is not a GGUF, and files cut short in the header or in the weights", async () => {
    const good = readFileSync((await writeTinyModel(path.join(tmp.path, "whole.gguf"), { architecture: "llama" })).path);
    const cases: [string, Buffer, RegExp][] = [
      ["text.gguf", Buffer.from("hello, not a model"), /not a GGUF file/],
      ["empty.gguf", Buffer.alloc(0), /truncated/],
      ["header-cut.gguf", good.subarray(0, 200), /truncated/],
      ["data-cut.gguf", good.subarray(0, good.length - 64), /truncated: its tensors need \d+ bytes, it has \d+/],
    ];
    for (const [name, bytes, why] of cases) {
      const file = path.join(tmp.path, name);
      writeFileSync(file, bytes);
      await assert.rejects(inspectGguf(file), why, name);
    }
    await assert.rejects(inspectGguf(path.join(tmp.path, "missing.gguf")), { code: "ENOENT" });
  });
});
