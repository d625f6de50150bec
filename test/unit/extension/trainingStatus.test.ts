/** The status-bar item of a running job, without VS Code: which job, its progress, and what it reads. */
import assert from "node:assert/strict";
import { activeJob, applyEvents, NO_PROGRESS, statusBarView } from "../../../extension/core/trainingStatus.js";
import type { JobStreamEvent } from "../../../ui-shared/eventLog.js";
import type { Job } from "../../../sdk/wire.js";

const job = (id: string, status: Job["status"], minute: number, maxSteps = 60): Job => ({
  id,
  projectId: "p",
  name: `job-${id}`,
  status,
  config: { maxSteps },
  artifactCount: 0,
  error: null,
  createdAt: `2025-01-01T00:${String(minute).padStart(2, "0")}:00.000Z`,
  startedAt: null,
  finishedAt: null,
});
const event = (type: JobStreamEvent["type"], data: Record<string, unknown>): JobStreamEvent => ({ id: "1", type, raw: JSON.stringify(data), data });

describe("extension/core/trainingStatus", () => {
  it("follows the newest running job, else the newest queued one, else none", () => {
    assert.equal(activeJob([job("a", "completed", 9), job("b", "running", 1), job("c", "running", 2), job("d", "queued", 8)])?.id, "c");
    assert.equal(activeJob([job("a", "queued", 1), job("b", "queued", 3), job("c", "failed", 9)])?.id, "b");
    assert.equal(activeJob([job("a", "completed", 1), job("b", "cancelled", 2)]), undefined);
    assert.equal(activeJob([]), undefined);
  });

  it("keeps the latest step, loss and eval loss, and ends with the job", () => {
    let progress = applyEvents(NO_PROGRESS, [event("training.started", {}), event("training.log", { step: 1, loss: 2.5, evalLoss: null })]);
    assert.deepEqual(progress, { ended: false, step: 1, loss: 2.5 });
    progress = applyEvents(progress, [
      event("training.log", { step: 10, evalLoss: 2.1 }),
      event("checkpoint.saved", { step: 10 }),
      event("training.log", { step: 11, loss: 1.9 }),
    ]);
    assert.deepEqual(progress, { ended: false, step: 11, loss: 1.9, evalLoss: 2.1 });
    for (const end of ["training.completed", "training.failed", "training.cancelled"] as const)
      assert.equal(applyEvents(progress, [event(end, {})]).ended, true);
  });

  it("reads `svc: step 12/60 · loss 1.2345`, with eval loss and other running jobs in the tooltip", () => {
    const view = statusBarView(job("a", "running", 1), { ended: false, step: 12, loss: 1.23449, evalLoss: 1.5 }, 2);
    assert.equal(view.text, "$(sync~spin) svc: step 12/60 · loss 1.2345");
    assert.equal(view.tooltip, "job-a: step 12/60, loss 1.2345\nEval loss 1.5000\nClick to open the job.\n2 more jobs running");
    assert.equal(view.accessibilityLabel, "svc training job job-a, step 12/60, loss 1.2345");
    assert.doesNotMatch(view.accessibilityLabel, /\$\(/, "no codicon syntax for screen readers");
  });

  it("says queued or starting before the first step, and leaves out the total when epochs decide it", () => {
    assert.equal(statusBarView(job("a", "queued", 1), NO_PROGRESS).text, "$(clock) svc: queued");
    assert.equal(statusBarView(job("a", "running", 1), NO_PROGRESS).text, "$(sync~spin) svc: starting");
    const epochs = { ...job("a", "running", 1), config: { numTrainEpochs: 2 } };
    assert.equal(statusBarView(epochs, { ended: false, step: 3 }).text, "$(sync~spin) svc: step 3");
  });
});
