/**
 * `svc export`'s default adapter (issue 27): with no --checkpoint, the job's best saved adapter by
 * its eval metric (earlyStopping.metric, else eval loss), the one the job page marks; the final
 * adapter when it is the best. Against a real cloud; the worker side is the protocol spoken by the
 * test (events, and adapter uploads of arbitrary bytes).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { bestSavedStep } from "../../cli/commands/exportBestStep.js";
import { newAccount, type Account } from "../support/api.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { assignedJob, uploadArtifact } from "../support/worker.js";

describe("svc export: the best saved adapter by default", () => {
  let cloud: TestCloud;
  let alice: Account;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
  });
  after(async () => cloud?.dispose());

  /** A completed job with a checkpoint at step 2 and the final adapter at step 4, evaluated as given. */
  async function trainedJob(name: string, config: Record<string, unknown>, evals: Record<number, { evalLoss: number; evalTokenAccuracy: number }>) {
    const { job, worker, assign } = await assignedJob(cloud, alice.client, { name, config: { maxSteps: 4, ...config } });
    let seq = 0;
    await worker.emit(job.id, ++seq, "training.started", {});
    for (const step of [1, 2, 3, 4]) await worker.emit(job.id, ++seq, "training.log", { step, loss: 1, ...(evals[step] ?? {}) });
    for (const [name, kind, step] of [
      ["checkpoint-2.gguf", "checkpoint", "2"],
      ["adapter.gguf", "adapter", "4"],
    ]) {
      const res = await uploadArtifact(cloud, assign, { name, kind, step }, randomBytes(64));
      assert.equal(res.status, 201, await res.text());
    }
    await worker.emit(job.id, ++seq, "training.completed", { artifacts: 2 });
    worker.close();
    return alice.client.getJob(job.id);
  }

  it("takes the checkpoint whose evaluation was best, by eval loss or by the early-stopping metric", async () => {
    const evals = { 2: { evalLoss: 0.3, evalTokenAccuracy: 0.8 }, 4: { evalLoss: 0.5, evalTokenAccuracy: 0.9 } };
    assert.equal(await bestSavedStep(alice.client, await trainedJob("by-loss", {}, evals)), 2);
    const byAccuracy = await trainedJob("by-accuracy", { evalSteps: 2, earlyStopping: { metric: "evalTokenAccuracy", patience: 3 } }, evals);
    assert.equal(await bestSavedStep(alice.client, byAccuracy), undefined, "the final adapter is the most accurate");
    const unevaluated = await trainedJob("unevaluated", {}, {});
    assert.equal(await bestSavedStep(alice.client, unevaluated), undefined, "nothing evaluated: the final adapter");
  });
});
