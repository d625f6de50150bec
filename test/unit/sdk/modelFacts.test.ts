import assert from "node:assert/strict";
import { formatBytes, formatParameterCount, modelSummary, trainingLabel } from "../../../sdk/modelFacts.js";
import type { BaseModel } from "../../../sdk/wire.js";

const model = (over: Partial<BaseModel>): BaseModel => ({
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
  ...over,
});

describe("sdk/modelFacts: how model facts read in lists and pickers", () => {
  it("rounds parameter counts the way model cards name them", () => {
    assert.equal(formatParameterCount(134_515_008), "135M"); // SmolLM2-135M
    assert.equal(formatParameterCount(361_821_120), "362M");
    assert.equal(formatParameterCount(494_032_768), "0.5B"); // Qwen2.5-0.5B
    assert.equal(formatParameterCount(596_049_920), "0.6B"); // Qwen3-0.6B
    assert.equal(formatParameterCount(1_235_814_400), "1.2B"); // Llama 3.2 1B
    assert.equal(formatParameterCount(8_030_261_248), "8B");
    assert.equal(formatParameterCount(70_553_706_496), "71B");
    assert.equal(formatParameterCount(466_048), "466K");
    assert.equal(formatParameterCount(1_500_000), "1.5M");
    assert.equal(formatParameterCount(812), "812");
  });

  it("formats file sizes in decimal units", () => {
    assert.equal(formatBytes(512), "512 B");
    assert.equal(formatBytes(1_882_624), "1.9 MB");
    assert.equal(formatBytes(396_705_472), "397 MB");
    assert.equal(formatBytes(4_920_000_000), "4.9 GB");
  });

  it("puts the facts on one line and marks serve-only models", () => {
    assert.equal(modelSummary(model({})), "my-qwen · qwen3 · 0.6B · Q4_K_M · ctx 40960");
    assert.equal(
      modelSummary(
        model({ name: "gemma", architecture: "gemma2", parameters: 2_614_341_888, trainable: false, notTrainableReason: "gemma2 is not trainable" }),
      ),
      "gemma · gemma2 · 2.6B · Q4_K_M · ctx 40960 · serve only",
    );
    const upstream = model({
      name: "gpu-box",
      source: "upstream",
      trainable: false,
      architecture: null,
      parameters: null,
      quantization: null,
      contextLength: null,
    });
    assert.equal(modelSummary(upstream), "gpu-box · upstream server · serve only");
    assert.equal(trainingLabel(upstream), "serve only");
    assert.equal(trainingLabel(model({})), "trainable");
  });

  it("leaves out facts that are not known", () => {
    assert.equal(modelSummary(model({ parameters: null, quantization: null, contextLength: null })), "my-qwen · qwen3");
  });
});
