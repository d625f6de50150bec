/**
 * earlyStopping through the real cloud and worker: the job config's `earlyStopping` reaches the
 * trainer, the run ends at the evaluation where the metric has not improved for `patience`
 * evaluations, says so in a progress event, and its final adapter is that step's. An invalid
 * setting is refused by the cloud before any worker sees it. Real training of the quickstart
 * (a fixed seed, so the same evaluations every run).
 */
import assert from "node:assert/strict";
import type { JobConfig } from "../../sdk/wire.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount, trainToEnd, uploadQuickstartData, type Account } from "../support/api.js";

describe("earlyStopping: a job whose eval metric stalls ends early, through the worker", function () {
  this.timeout(150_000);
  let cloud: TestCloud;
  let account: Account;

  before(async () => {
    cloud = await startTestCloud({ workers: 1 });
    account = await newAccount(cloud);
  });
  after(async () => cloud?.dispose());

  const datasets = () => uploadQuickstartData(account.client);
  const config: JobConfig = {
    model: "svc-tiny",
    maxSteps: 60,
    learningRate: 3e-3,
    batchSize: 8,
    seed: 42,
    evalSteps: 1,
    saveSteps: 0,
    lora: { r: 8, alpha: 16, targetModules: ["q_proj", "v_proj"] },
  };

  it("stops once eval token accuracy has not improved for `patience` evaluations, with the final adapter there", async () => {
    const { job, events } = await trainToEnd(account.client, {
      name: "stops-early",
      ...(await datasets()),
      config: { ...config, earlyStopping: { metric: "evalTokenAccuracy", patience: 2 } },
    });
    const logs = events.filter((e) => e.type === "training.log").map((e) => e.data as { step: number; evalTokenAccuracy: number });
    // The rule, counted here from the logged evaluations: the first step with 2 in a row not above the best.
    let best = -Infinity;
    let bestStep = 0;
    let stale = 0;
    let expected = 60;
    for (const log of logs) {
      if (log.evalTokenAccuracy > best) [best, bestStep, stale] = [log.evalTokenAccuracy, log.step, 0];
      else if (++stale >= 2) {
        expected = log.step;
        break;
      }
    }
    assert.ok(expected < 60, `the accuracies stall somewhere: ${logs.map((l) => l.evalTokenAccuracy.toFixed(3))}`);
    assert.equal(logs[logs.length - 1].step, expected, "no step after the stop");
    const notice = events.find((e) => e.type === "training.progress" && String(e.data.message).startsWith("early stopping"));
    assert.equal(
      notice?.data.message,
      `early stopping at step ${expected}: evalTokenAccuracy has not improved for 2 evaluations (best ${best.toFixed(4)} at step ${bestStep})`,
    );
    const adapter = (await account.client.listArtifacts(job.id)).find((a) => a.kind === "adapter");
    assert.equal(adapter?.step, expected);
  });

  it("the cloud refuses a bad earlyStopping with the field named", async () => {
    // A metric the contract does not know, sent anyway: the cloud is the check no client can skip.
    const bad = { ...config, earlyStopping: { metric: "accuracy", patience: 0 } } as unknown as JobConfig;
    await assert.rejects(
      account.client.createJob({ name: "bad", ...(await datasets()), config: bad }),
      /earlyStopping\.patience: must be an integer from 1 to 1000; config\.earlyStopping\.metric: must be "evalLoss" or "evalTokenAccuracy"/,
    );
  });
});
