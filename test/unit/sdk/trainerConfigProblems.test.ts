import assert from "node:assert/strict";
import { describeConfigProblems, jobConfigProblems, TrainerConfigError, validateTrainerConfig, type TrainerConfig } from "../../../sdk/trainer/config.js";

const base: TrainerConfig = { name: "run", model: "svc-tiny", dataset: "data/train.jsonl", maxSteps: 10 };

describe("trainer config: every bad field at once, one rule set for createTrainer, the cloud and the worker", () => {
  it("createTrainer (svc start, before any upload) lists every bad field, not the first", () => {
    const bad = { ...base, maxSteps: -5, learningRate: "fast", lora: { r: 0 } } as unknown as TrainerConfig;
    assert.throws(
      () => validateTrainerConfig(bad),
      (e: unknown) =>
        e instanceof TrainerConfigError &&
        e.field === "maxSteps" &&
        e.problems.map((p) => p.field).join() === "maxSteps,learningRate,lora.r" &&
        e.message ===
          "createTrainer: maxSteps must be an integer from 1 to 1000000; learningRate must be a number between 0 and 1; lora.r must be an integer from 1 to 256",
    );
  });

  it("a number spelled as a string is refused everywhere, not compared as one", () => {
    for (const [field, value] of [
      ["learningRate", "0.5"],
      ["numTrainEpochs", "2"],
      ["maxSteps", "10"],
      ["seed", "1"],
    ] as const) {
      const config = { ...base, maxSteps: undefined, numTrainEpochs: 1, [field]: value } as unknown as TrainerConfig;
      if (field === "maxSteps") delete (config as { numTrainEpochs?: number }).numTrainEpochs;
      assert.throws(() => validateTrainerConfig(config), new RegExp(`createTrainer: ${field} must be`), field);
      const length = field === "maxSteps" || field === "numTrainEpochs" ? {} : { maxSteps: 1 };
      assert.equal(jobConfigProblems({ ...length, [field]: value })[0]?.field, field, field);
    }
    assert.deepEqual(jobConfigProblems({ maxSteps: 1, lora: { alpha: "16" } }), [{ field: "lora.alpha", message: "must be a positive number" }]);
  });

  it("the cloud accepts every config createTrainer produces", () => {
    const variants: TrainerConfig[] = [
      base,
      { ...base, maxSteps: undefined, numTrainEpochs: 0.5, evalDataset: "data/eval.jsonl", evalSteps: 5, warmupSteps: 0, maxSeqLength: 16, backend: "torch" },
      { ...base, learningRate: 0.999, batchSize: 1024, saveSteps: 0, seed: -3, schedule: "linear", lora: { r: 256, alpha: 0.5, targetModules: ["q_proj"] } },
      { ...base, evalDataset: "data/eval.jsonl", evalSteps: 5, earlyStopping: { patience: 3 } },
      { ...base, evalDataset: "data/eval.jsonl", evalSteps: 5, earlyStopping: { metric: "evalTokenAccuracy", patience: 1 } },
      { ...base, dtype: "bfloat16", gradientCheckpointing: true },
      { ...base, dtype: "auto", gradientCheckpointing: "auto" },
    ];
    for (const config of variants) assert.deepEqual(jobConfigProblems(validateTrainerConfig(config)), [], JSON.stringify(config));
  });

  it("earlyStopping: a patience, a known metric (evalLoss by default), and periodic evaluation to compare", () => {
    const withEval = { ...base, evalDataset: "data/eval.jsonl", evalSteps: 5 };
    assert.deepEqual(validateTrainerConfig({ ...withEval, earlyStopping: { patience: 3 } }).earlyStopping, { metric: "evalLoss", patience: 3 });
    assert.throws(() => validateTrainerConfig({ ...base, earlyStopping: { patience: 3 } }), /createTrainer: earlyStopping needs evalDataset and evalSteps/);
    assert.deepEqual(jobConfigProblems({ maxSteps: 1, earlyStopping: { metric: "loss", patience: 0 } }), [
      { field: "earlyStopping.patience", message: "must be an integer from 1 to 1000" },
      { field: "earlyStopping.metric", message: 'must be "evalLoss" or "evalTokenAccuracy"' },
    ]);
    assert.deepEqual(jobConfigProblems({ maxSteps: 1, earlyStopping: 3 }), [{ field: "earlyStopping", message: "must be an object: { metric, patience }" }]);
  });

  it("dtype and gradientCheckpointing reach the job config as given, and bad values are refused by name", () => {
    const job = validateTrainerConfig({ ...base, dtype: "float32", gradientCheckpointing: false });
    assert.equal(job.dtype, "float32");
    assert.equal(job.gradientCheckpointing, false);
    const unset = validateTrainerConfig(base);
    assert.ok(!("dtype" in unset) && !("gradientCheckpointing" in unset), "absent: the backend's own 'auto'");
    assert.deepEqual(jobConfigProblems({ maxSteps: 1, dtype: "fp16", gradientCheckpointing: "yes" }), [
      { field: "dtype", message: 'must be one of auto, float32, bfloat16, got "fp16"' },
      { field: "gradientCheckpointing", message: 'must be true, false or "auto"' },
    ]);
    assert.throws(
      () => validateTrainerConfig({ ...base, dtype: "half" } as unknown as TrainerConfig),
      /createTrainer: dtype must be one of auto, float32, bfloat16, got "half"/,
    );
  });

  it("quantizedBase reaches the job config as given (absent: the backend keeps a quantised base), and a bad value is refused", () => {
    assert.equal(validateTrainerConfig({ ...base, quantizedBase: "dequantize" }).quantizedBase, "dequantize");
    assert.ok(!("quantizedBase" in validateTrainerConfig(base)));
    assert.deepEqual(jobConfigProblems({ maxSteps: 1, quantizedBase: "q4" }), [
      { field: "quantizedBase", message: 'must be one of keep, dequantize, got "q4"' },
    ]);
  });

  it("a job config names each problem by its path", () => {
    assert.deepEqual(jobConfigProblems(null), [{ field: "config", message: "must be an object" }]);
    assert.deepEqual(jobConfigProblems([]), [{ field: "config", message: "must be an object" }]);
    const exactlyOne = [{ field: "maxSteps", message: "or numTrainEpochs must be set (exactly one of them)" }];
    assert.deepEqual(jobConfigProblems({}), exactlyOne, "a job that would never end");
    assert.deepEqual(jobConfigProblems({ maxSteps: 3, numTrainEpochs: 1 }), exactlyOne);
    assert.deepEqual(jobConfigProblems({ maxSteps: 3 }), []);
    const problems = jobConfigProblems({ maxSteps: -5, learningRate: "fast", lora: { targetModules: [] } });
    assert.equal(
      describeConfigProblems(problems, "config."),
      "config.maxSteps: must be an integer from 1 to 1000000; config.learningRate: must be a number between 0 and 1; config.lora.targetModules: must be a non-empty array",
    );
  });
});
