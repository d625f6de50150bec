import assert from "node:assert/strict";
import type { SampleCheckpoint } from "../../../sdk/wire.js";
import { passRateText, rowPasses, sampleChanges } from "../../../ui-shared/sampleChanges.js";

const checkpoint = (step: number, rows: [string, boolean | null][]): SampleCheckpoint => ({
  step,
  graders: ["json_valid"],
  samples: rows.map(([answer, grade], i) => ({ prompt: `p${i}`, reference: "r", answer, grades: { json_valid: grade } })),
  passRate: null,
  seconds: 0,
});

describe("sample table: what changed from the previous checkpoint", () => {
  it("names a sample that starts or stops passing, or whose answer alone changed", () => {
    const before = checkpoint(20, [
      ["a", false],
      ["b", true],
      ["c", false],
      ["d", true],
    ]);
    const after = checkpoint(40, [
      ["x", true],
      ["y", false],
      ["z", false],
      ["d", true],
    ]);
    assert.deepEqual(sampleChanges(after, before), ["now passes", "now fails", "answer changed", "same"]);
    assert.deepEqual(sampleChanges(before, undefined), ["first", "first", "first", "first"]);
  });

  it("a sample passes when every grader that ran says yes; rates read as percentages", () => {
    assert.equal(rowPasses({ prompt: "", reference: "", answer: "", grades: { a: true, b: null } }), true);
    assert.equal(rowPasses({ prompt: "", reference: "", answer: "", grades: { a: null } }), false);
    assert.equal(passRateText(0.875), "88%");
    assert.equal(passRateText(null), "—");
  });
});
