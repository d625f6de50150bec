import assert from "node:assert/strict";
import { bestAdapter, bestMetricOf } from "../../../ui-shared/bestCheckpoint.js";
import { JobSeries } from "../../../ui-shared/jobSeries.js";

describe("ui-shared/bestCheckpoint", () => {
  const series = new JobSeries();
  series.add({ step: 10, loss: 1, evalLoss: 0.9, evalTokenAccuracy: 0.5 });
  series.add({ step: 20, loss: 0.8, evalLoss: 0.6, evalTokenAccuracy: 0.7 });
  series.add({ step: 25, loss: 0.7, evalLoss: 0.1, evalTokenAccuracy: 0.99 }); // evaluated, never saved
  series.add({ step: 30, loss: 0.7, evalLoss: 0.7, evalTokenAccuracy: 0.8 });
  series.add({ step: 40, loss: 0.6, evalLoss: 0.6, evalTokenAccuracy: 0.8 });

  it("picks the saved step whose own evaluation is best on the metric, lower loss or higher accuracy", () => {
    assert.deepEqual(bestAdapter(series, [20, 30, 40], "evalLoss"), { step: 20, metric: "evalLoss", value: 0.6, text: "eval loss 0.6000" });
    assert.deepEqual(bestAdapter(series, [20, 30, 40], "evalTokenAccuracy"), {
      step: 30,
      metric: "evalTokenAccuracy",
      value: 0.8,
      text: "eval token accuracy 80.0%",
    });
  });

  it("passes over saved steps without an evaluation, and has no best without any", () => {
    assert.equal(bestAdapter(series, [15, 30], "evalLoss")?.step, 30);
    assert.equal(bestAdapter(series, [15, 35], "evalLoss"), undefined);
    assert.equal(bestAdapter(new JobSeries(), [10], "evalLoss"), undefined);
  });

  it("judges by the job's earlyStopping metric, else eval loss", () => {
    assert.equal(bestMetricOf({ earlyStopping: { metric: "evalTokenAccuracy", patience: 2 } }), "evalTokenAccuracy");
    assert.equal(bestMetricOf({ earlyStopping: { metric: "evalLoss", patience: 2 } }), "evalLoss");
    assert.equal(bestMetricOf({}), "evalLoss");
    assert.equal(bestMetricOf(undefined), "evalLoss");
  });
});
