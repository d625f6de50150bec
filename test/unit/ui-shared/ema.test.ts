import assert from "node:assert/strict";
import { emaSmooth, SMOOTHING_MAX } from "../../../ui-shared/ema.js";

const points = (...values: number[]) => values.map((value, i) => ({ step: (i + 1) * 10, value }));

describe("ui-shared/ema", () => {
  it("weight 0 is the raw series itself (no copy)", () => {
    const raw = points(1, 2, 3);
    assert.equal(emaSmooth(raw, 0), raw);
  });

  it("is debiased like TensorBoard's smoothing: the first point is kept, later ones blend", () => {
    const smoothed = emaSmooth(points(4, 0, 0), 0.5);
    assert.deepEqual(
      smoothed.map((p) => p.step),
      [10, 20, 30],
      "same steps",
    );
    assert.equal(smoothed[0].value, 4, "debiasing: no pull towards zero at the start");
    // accumulated: 2, 1, 0.5; debias 1 - 0.5^n: 0.5, 0.75, 0.875
    assert.ok(Math.abs(smoothed[1].value - 1 / 0.75) < 1e-12);
    assert.ok(Math.abs(smoothed[2].value - 0.5 / 0.875) < 1e-12);
  });

  it("a constant series stays constant and a noisy one gets flatter", () => {
    assert.ok(emaSmooth(points(3, 3, 3, 3), 0.9).every((p) => Math.abs(p.value - 3) < 1e-12));
    const noisy = points(...Array.from({ length: 200 }, (_, i) => (i % 2 ? 1 : 3)));
    const tail = emaSmooth(noisy, 0.9).slice(100);
    const spread = Math.max(...tail.map((p) => p.value)) - Math.min(...tail.map((p) => p.value));
    assert.ok(spread < 0.3, `spread ${spread}`);
  });

  it("caps the weight below 1, where the curve would freeze", () => {
    const smoothed = emaSmooth(points(1, 100), 1);
    assert.deepEqual(smoothed, emaSmooth(points(1, 100), SMOOTHING_MAX));
    assert.ok(smoothed[1].value > 1);
  });
});
