import assert from "node:assert/strict";
import { TrainingOutputReader, trainingFailure } from "../../../extension/core/trainingOutput.js";

describe("extension/core/trainingOutput", () => {
  it("finds the job id in the first line even when it arrives split across chunks", () => {
    const reader = new TrainingOutputReader();
    assert.equal(reader.feed("job 12ab-").jobId, undefined);
    assert.equal(reader.feed("34 queued: quickstart\nstep=1 loss=2.0\n").jobId, "12ab-34");
    const done = reader.feed("job 12ab-34 completed\n");
    assert.equal(done.finalStatus, "completed");
    assert.equal(trainingFailure(done), undefined);
  });

  it("reports a failed job and a CLI that failed before any job", () => {
    const failed = new TrainingOutputReader();
    failed.feed("job j1 queued: x\nout of memory\njob j1 failed\n");
    assert.equal(trainingFailure(failed.outcome()), "Training failed: job j1 failed");
    const broken = new TrainingOutputReader();
    broken.feed("svc: build failed: Unexpected token\n");
    assert.equal(trainingFailure(broken.outcome()), "svc start failed: build failed: Unexpected token");
    assert.equal(trainingFailure(new TrainingOutputReader().outcome()), "svc start failed: it exited without output");
  });

  it("tells a dry run's report (dryRun: true) from a run: ok is no failure, not ok is", () => {
    const ok = new TrainingOutputReader().feed(
      'checking "x": ...\ndry run of "x" on svc-tiny: nothing was uploaded and no job was created\nok: svc start would upload these datasets and train\n',
    );
    assert.equal(ok.dryRun, true);
    assert.equal(ok.jobId, undefined);
    assert.equal(trainingFailure(ok), undefined);
    const bad = new TrainingOutputReader().feed(
      'dry run of "x" on svc-tiny: nothing was uploaded and no job was created\n       line 2: not valid JSON\nnot ok: fix the lines above before svc start\n',
    );
    assert.equal(trainingFailure(bad), "Dry run: not ok: fix the lines above before svc start");
    assert.equal(new TrainingOutputReader().feed("job j1 queued: x\n").dryRun, false);
  });
});
