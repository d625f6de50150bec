import assert from "node:assert/strict";
import { targetSummary } from "../../../ui-shared/targetSummary.js";

describe("ui-shared/targetSummary", () => {
  const jobId = "3f2a9c1e-8b7d-4e6f-a1b2-c3d4e5f60718";
  it("words each target kind as the spec lists it", () => {
    assert.equal(targetSummary({ kind: "adapter", jobId }), "Final adapter (job 3f2a9c1e)");
    assert.equal(targetSummary({ kind: "checkpoint", jobId, step: 40 }), "Checkpoint step 40 (job 3f2a9c1e)");
    assert.equal(targetSummary({ kind: "base_model", name: "svc-tiny-base" }), "Base model: svc-tiny-base");
  });

  it("names the vLLM upstream serving an adapter", () => {
    assert.equal(targetSummary({ kind: "adapter", jobId, baseModel: "gpu-box" }), "Final adapter (job 3f2a9c1e) on gpu-box");
    assert.equal(targetSummary({ kind: "checkpoint", jobId, step: 40, baseModel: "gpu-box" }), "Checkpoint step 40 (job 3f2a9c1e) on gpu-box");
  });
});
