import assert from "node:assert/strict";
import { modelPickText } from "../../../extension/core/modelPickItem.js";
import type { BaseModel } from "../../../sdk/wire.js";

const qwen: BaseModel = {
  name: "my-qwen",
  source: "gguf",
  trainable: true,
  notTrainableReason: null,
  architecture: "qwen3",
  parameters: 596_049_920,
  quantization: "Q4_K_M",
  contextLength: 40960,
  sizeBytes: 396_705_472,
  hasChatTemplate: true,
  createdAt: "2026-01-01T00:00:00.000Z",
};

describe("extension/core/modelPickItem: base models in the Create Endpoint quick pick", () => {
  it("shows the facts compactly after the name", () => {
    assert.deepEqual(modelPickText(qwen), { label: "$(database) my-qwen", description: "Base model · qwen3 · 0.6B · Q4_K_M · ctx 40960" });
  });

  it("marks a serve-only model and puts its reason underneath", () => {
    const gemma = { ...qwen, name: "gemma", architecture: "gemma2", trainable: false, notTrainableReason: "gemma2 cannot be fine-tuned" };
    assert.deepEqual(modelPickText(gemma), {
      label: "$(database) gemma",
      description: "Base model · gemma2 · 0.6B · Q4_K_M · ctx 40960 · serve only",
      detail: "Serve only: gemma2 cannot be fine-tuned",
    });
  });

  it("an upstream server says so", () => {
    const upstream: BaseModel = {
      ...qwen,
      name: "gpu-box",
      source: "upstream",
      trainable: false,
      notTrainableReason: "upstream",
      architecture: null,
      parameters: null,
      quantization: null,
      contextLength: null,
    };
    assert.equal(modelPickText(upstream).description, "Base model · upstream server · serve only");
  });
});
