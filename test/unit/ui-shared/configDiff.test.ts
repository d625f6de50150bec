import assert from "node:assert/strict";
import { compareConfigs, flattenConfig } from "../../../ui-shared/configDiff.js";

describe("ui-shared/configDiff", () => {
  it("flattens nested objects to dotted keys and keeps arrays whole", () => {
    const flat = flattenConfig({ model: "svc-tiny", lora: { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj"] }, seed: null, empty: {} });
    assert.deepEqual(
      [...flat],
      [
        ["model", "svc-tiny"],
        ["lora.r", "8"],
        ["lora.alpha", "16"],
        ["lora.targetModules", '["q_proj","v_proj"]'],
        ["seed", "null"],
        ["empty", "{}"],
      ],
    );
  });

  it("lines configs up by key and flags the rows that differ, a missing key included", () => {
    const rows = compareConfigs([
      { model: "svc-tiny", learningRate: 0.003, lora: { r: 8 } },
      { model: "svc-tiny", learningRate: 0.001, lora: { r: 8 }, evalSteps: 10 },
      { model: "svc-tiny", learningRate: 0.003, lora: { r: 8 } },
    ]);
    assert.deepEqual(rows, [
      { key: "model", values: ["svc-tiny", "svc-tiny", "svc-tiny"], differs: false },
      { key: "learningRate", values: ["0.003", "0.001", "0.003"], differs: true },
      { key: "lora.r", values: ["8", "8", "8"], differs: false },
      { key: "evalSteps", values: [undefined, "10", undefined], differs: true },
    ]);
  });

  it("a job without a config compares as all-missing", () => {
    const rows = compareConfigs([{ a: 1 }, undefined as unknown as Record<string, unknown>]);
    assert.deepEqual(rows, [{ key: "a", values: ["1", undefined], differs: true }]);
  });
});
