import assert from "node:assert/strict";
import { metricRows, metricsCsv, metricsFileName, metricsJson } from "../../../ui-shared/seriesExport.js";
import { JobSeries } from "../../../ui-shared/jobSeries.js";

describe("ui-shared/seriesExport", () => {
  const series = new JobSeries();
  series.add({ step: 1, loss: 2.5, learningRate: 0.0001, tokensPerSecond: 812.25 });
  series.add({ step: 2, loss: 2.25, evalLoss: 2.75, learningRate: 0.0002, tokensPerSecond: 790, tokenAccuracy: 0.625, evalTokenAccuracy: 0.5 });
  series.add({ step: 3, evalLoss: 2.5 }); // eval-only frame
  const rows = metricRows(series);

  it("merges every metric into one row per step, leaving out what a step did not log", () => {
    assert.deepEqual(rows, [
      { step: 1, loss: 2.5, learningRate: 0.0001, tokensPerSecond: 812.25 },
      { step: 2, loss: 2.25, evalLoss: 2.75, learningRate: 0.0002, tokensPerSecond: 790, tokenAccuracy: 0.625, evalTokenAccuracy: 0.5 },
      { step: 3, evalLoss: 2.5 },
    ]);
    assert.deepEqual(metricRows(new JobSeries()), []);
  });

  it("writes CSV with a header, full precision and empty cells", () => {
    assert.equal(
      metricsCsv(rows),
      "step,loss,evalLoss,learningRate,tokensPerSecond,tokenAccuracy,evalTokenAccuracy\n1,2.5,,0.0001,812.25,,\n2,2.25,2.75,0.0002,790,0.625,0.5\n3,,2.5,,,,\n",
    );
  });

  it("writes JSON that says which job and which metrics", () => {
    const parsed = JSON.parse(metricsJson({ id: "0123456789", name: "run" }, rows));
    assert.deepEqual(parsed.job, { id: "0123456789", name: "run" });
    assert.deepEqual(parsed.metrics, ["loss", "evalLoss", "learningRate", "tokensPerSecond", "tokenAccuracy", "evalTokenAccuracy"]);
    assert.deepEqual(parsed.rows, rows);
  });

  it("names the file after the job, safely", () => {
    assert.equal(metricsFileName({ id: "0123456789abcdef", name: "quickstart-json-answers" }, "csv"), "quickstart-json-answers-01234567-metrics.csv");
    assert.equal(metricsFileName({ id: "0123456789abcdef", name: "a/b: c?" }, "json"), "a-b-c-01234567-metrics.json");
    assert.equal(metricsFileName({ id: "0123456789abcdef", name: "///" }, "csv"), "job-01234567-metrics.csv");
    assert.equal(metricsFileName({ id: "0123456789abcdef" }, "csv"), "job-01234567-metrics.csv");
  });
});
