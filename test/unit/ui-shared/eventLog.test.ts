import assert from "node:assert/strict";
import { appendBounded, EVENT_LOG_LIMIT, logMessage, parseEventData, reduceJobStatus, type JobStreamEventType } from "../../../ui-shared/eventLog.js";
import { decodeJobEventBatch } from "../../../ui-shared/jobEventBatch.js";
import { logMessage as sdkLogMessage } from "../../../sdk/logMessage.js";

const message = (type: JobStreamEventType, raw: string) => logMessage({ type, raw, data: parseEventData(raw) });

describe("ui-shared/eventLog", () => {
  it("training.started logs the raw JSON payload", () => {
    assert.equal(message("training.started", `{"jobId":"j1","maxSteps":40}`), `{"jobId":"j1","maxSteps":40}`);
  });

  it("training.log lists step then the numeric losses with four decimals", () => {
    assert.equal(message("training.log", `{"step":10,"loss":2.31,"evalLoss":null,"learningRate":0.001}`), "step=10 loss=2.3100");
    assert.equal(message("training.log", `{"step":20,"loss":2.1,"evalLoss":2.456789}`), "step=20 loss=2.1000 evalLoss=2.4568");
    assert.equal(message("training.log", `{"step":30,"evalLoss":2.2}`), "step=30 evalLoss=2.2000");
    assert.equal(message("training.log", `{"step":40,"loss":null}`), "step=40");
  });

  it("training.log keeps the spec's form when a frame carries token accuracies (they go to the chart, not the line)", () => {
    assert.equal(message("training.log", `{"step":10,"loss":2.31,"evalLoss":null,"tokenAccuracy":0.61,"evalTokenAccuracy":null}`), "step=10 loss=2.3100");
    assert.equal(
      message("training.log", `{"step":20,"loss":2.1,"evalLoss":2.456789,"tokenAccuracy":0.5,"evalTokenAccuracy":0.4444444}`),
      "step=20 loss=2.1000 evalLoss=2.4568",
    );
  });

  it("the terminal's line (svc start) adds the token accuracies after the losses", () => {
    const data = { step: 20, loss: 2.1, evalLoss: 2.456789, tokenAccuracy: 0.5, evalTokenAccuracy: 0.4444444 };
    assert.equal(
      sdkLogMessage("training.log", data, { accuracies: true }),
      "step=20 loss=2.1000 evalLoss=2.4568 tokenAccuracy=0.5000 evalTokenAccuracy=0.4444",
    );
    assert.equal(sdkLogMessage("training.log", data), "step=20 loss=2.1000 evalLoss=2.4568");
  });

  it("checkpoint, completion and failure messages", () => {
    assert.equal(message("checkpoint.saved", `{"step":20,"name":"checkpoint-20"}`), "step=20");
    assert.equal(message("training.completed", `{"artifacts":3}`), "3 artifacts");
    assert.equal(message("training.completed", `{"artifacts":1}`), "1 artifact");
    assert.equal(message("training.completed", `{"artifacts":0}`), "0 artifacts");
    assert.equal(message("training.failed", `{"error":"CUDA is not here"}`), "CUDA is not here");
  });

  it("keeps only the last 500 entries", () => {
    let log: number[] = [];
    for (let i = 0; i < 1234; i++) log = appendBounded(log, i);
    assert.equal(log.length, EVENT_LOG_LIMIT);
    assert.equal(log[0], 1234 - 500);
    assert.equal(log[log.length - 1], 1233);
  });

  it("reduces job status per SPEC section 3", () => {
    assert.equal(reduceJobStatus("queued", "training.started"), "running");
    assert.equal(reduceJobStatus("running", "training.log"), "running");
    assert.equal(reduceJobStatus("running", "checkpoint.saved"), "running");
    assert.equal(reduceJobStatus("running", "training.completed"), "completed");
    assert.equal(reduceJobStatus("running", "training.failed"), "failed");
    assert.equal(reduceJobStatus("running", "training.cancelled"), "cancelled");
    assert.equal(reduceJobStatus("queued", "training.log"), "queued");
  });

  it("tolerates payloads that are not JSON objects", () => {
    assert.deepEqual(parseEventData("not json"), {});
    assert.deepEqual(parseEventData("[1]"), {});
  });
});

describe("ui-shared/jobEventBatch", () => {
  it("decodes a batch frame without re-serialising object payloads, and logs them as the named frame would", () => {
    const events = decodeJobEventBatch(
      '[{"seq":1,"type":"training.started","data":{"model":"svc-tiny"}},{"seq":2,"type":"training.log","data":{"step":1,"loss":2}},{"seq":3,"type":"nope","data":{}},{"seq":4,"type":"training.failed","data":"boom"}]',
    );
    assert.deepEqual(
      events.map((e) => [e.id, e.type]),
      [
        ["1", "training.started"],
        ["2", "training.log"],
        ["4", "training.failed"],
      ],
    );
    assert.equal(events[0].raw, undefined, "no text kept for an object payload");
    assert.equal(logMessage(events[0]), '{"model":"svc-tiny"}');
    assert.equal(logMessage(events[1]), "step=1 loss=2.0000");
    assert.equal(events[2].raw, '"boom"', "a non-object payload keeps its text");
    assert.equal(logMessage(events[2]), '"boom"');
    assert.deepEqual(decodeJobEventBatch("not json"), []);
  });
});
