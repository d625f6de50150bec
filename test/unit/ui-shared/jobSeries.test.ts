import assert from "node:assert/strict";
import { JobSeries, mergeSteps } from "../../../ui-shared/jobSeries.js";

describe("ui-shared/jobSeries", () => {
  it("splits frames into loss and eval series and ignores frames with no numeric value", () => {
    const series = new JobSeries();
    assert.equal(series.add({ step: 1, loss: null, evalLoss: null }), false);
    assert.equal(series.isEmpty, true);
    assert.equal(series.add({ step: 10, loss: 2.3 }), true);
    assert.equal(series.add({ step: 20, loss: 2.1, evalLoss: 2.4 }), true);
    assert.equal(series.add({ step: 25, evalLoss: 2.35 }), true);
    assert.deepEqual(
      series.loss.map((p) => p.step),
      [10, 20],
    );
    assert.deepEqual(
      series.evalLoss.map((p) => p.step),
      [20, 25],
    );
    assert.deepEqual(series.steps(), [10, 20, 25]);
  });

  it("keeps the learning rate and tokens/s the trainer logs, without counting them as chart data", () => {
    const series = new JobSeries();
    assert.equal(series.add({ step: 1, learningRate: 1e-4, tokensPerSecond: 900 }), false, "no loss: the placeholder stays");
    assert.equal(series.isEmpty, true);
    series.add({ step: 2, loss: 2, learningRate: 2e-4, tokensPerSecond: 1000, epoch: 0.1 });
    assert.deepEqual(series.learningRate, [
      { step: 1, value: 1e-4 },
      { step: 2, value: 2e-4 },
    ]);
    assert.deepEqual(
      series.tokensPerSecond.map((p) => p.value),
      [900, 1000],
    );
    series.add({ step: 2, loss: 1.5, learningRate: 3e-4 });
    assert.deepEqual(
      series.learningRate.map((p) => p.value),
      [1e-4, 3e-4],
      "a replayed step replaces",
    );
  });

  it("merges steps of any number of series", () => {
    const pts = (...steps: number[]) => steps.map((step) => ({ step, value: 0 }));
    assert.deepEqual(mergeSteps(pts(1, 3, 5), pts(2, 3, 6), pts(0, 7)), [0, 1, 2, 3, 5, 6, 7]);
    assert.deepEqual(mergeSteps(pts(4, 8)), [4, 8]);
    assert.deepEqual(mergeSteps(), []);
  });
});
