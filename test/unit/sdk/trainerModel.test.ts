import assert from "node:assert/strict";
import { TrainerConfigError, validateTrainerConfig, type TrainerConfig } from "../../../sdk/trainer/config.js";
import { checkTrainerModel, effectiveMaxSeqLength, TrainerModelError } from "../../../sdk/trainer/modelCheck.js";
import type { BaseModel } from "../../../sdk/wire.js";

const base: TrainerConfig = { name: "run", model: "my-qwen", dataset: "data/train.jsonl", maxSteps: 10 };

const registered = (over: Partial<BaseModel>): BaseModel => ({
  name: "svc-tiny",
  source: "gguf",
  trainable: true,
  notTrainableReason: null,
  architecture: "llama",
  parameters: 466_048,
  quantization: "F32",
  contextLength: 160,
  sizeBytes: 1_882_624,
  hasChatTemplate: false,
  createdAt: "2026-01-01T00:00:00.000Z",
  ...over,
});

const models = [
  registered({}),
  registered({ name: "my-qwen", architecture: "qwen3", contextLength: 40960 }),
  registered({ name: "gemma", architecture: "gemma2", trainable: false, notTrainableReason: "architecture gemma2: svc trains llama, qwen2 and qwen3" }),
];

describe("createTrainer: model and maxSeqLength", () => {
  it("accepts any non-empty model name (the cloud knows which exist)", () => {
    assert.equal(validateTrainerConfig(base).model, "my-qwen");
    assert.throws(
      () => validateTrainerConfig({ ...base, model: " " }),
      (e: unknown) => e instanceof TrainerConfigError && e.field === "model",
    );
    assert.throws(() => validateTrainerConfig({ ...base, model: undefined as unknown as string }), /createTrainer: model must name a registered base model/);
  });

  it("carries maxSeqLength when given, and only then", () => {
    assert.equal(validateTrainerConfig({ ...base, maxSeqLength: 512 }).maxSeqLength, 512);
    assert.equal("maxSeqLength" in validateTrainerConfig(base), false);
  });

  it("refuses a maxSeqLength outside 16..32768 or not an integer, naming the field", () => {
    for (const bad of [15, 32769, 100.5, 0, -1, Number.NaN]) {
      assert.throws(
        () => validateTrainerConfig({ ...base, maxSeqLength: bad }),
        /createTrainer: maxSeqLength must be an integer from 16 to 32768/,
        String(bad),
      );
    }
    assert.equal(validateTrainerConfig({ ...base, maxSeqLength: 16 }).maxSeqLength, 16);
    assert.equal(validateTrainerConfig({ ...base, maxSeqLength: 32768 }).maxSeqLength, 32768);
  });
});

describe("svc start's model check against the cloud's list", () => {
  it("returns the registered trainable model", () => {
    assert.equal(checkTrainerModel({ model: "my-qwen" }, models).architecture, "qwen3");
  });

  it("an unknown name lists the trainable models, not the serve-only ones", () => {
    assert.throws(
      () => checkTrainerModel({ model: "llama-70b" }, models),
      (e: unknown) =>
        e instanceof TrainerModelError &&
        /model: "llama-70b" is not registered with the cloud; trainable models: svc-tiny, my-qwen\. Register a GGUF with: svc models add/.test(e.message),
    );
  });

  it("a serve-only model gives its one-line reason", () => {
    assert.throws(
      () => checkTrainerModel({ model: "gemma" }, models),
      /model: "gemma" can be served but not trained: architecture gemma2: svc trains llama, qwen2 and qwen3/,
    );
  });

  it("maxSeqLength must fit the model's context", () => {
    assert.throws(
      () => checkTrainerModel({ model: "svc-tiny", maxSeqLength: 512 }, models),
      /maxSeqLength: 512 is longer than the context of "svc-tiny" \(160 tokens\)/,
    );
    assert.equal(checkTrainerModel({ model: "svc-tiny", maxSeqLength: 160 }, models).name, "svc-tiny");
  });

  it("the default sequence limit is the smaller of the context and 1024", () => {
    assert.equal(effectiveMaxSeqLength({}, { contextLength: 40960 }), 1024);
    assert.equal(effectiveMaxSeqLength({}, { contextLength: 160 }), 160);
    assert.equal(effectiveMaxSeqLength({ maxSeqLength: 64 }, { contextLength: 160 }), 64);
    assert.equal(effectiveMaxSeqLength({}, { contextLength: null }), undefined);
  });
});
