import assert from "node:assert/strict";
import { PanelConnection, type StreamSink } from "../../../extension/core/panelConnection.js";
import { TransportError } from "../../../ui-shared/transport.js";
import type { HostToViewMessage } from "../../../ui-shared/protocol/common.js";

/** Collects what the host posts; `settled()` waits for queued promise callbacks, not for time. */
function harness(options: { runStream?: (sink: StreamSink, signal: AbortSignal) => Promise<void> } = {}) {
  const posted: HostToViewMessage[] = [];
  let readyCalls = 0;
  const connection: PanelConnection = new PanelConnection({
    post: (m) => posted.push(m),
    handlers: {
      "api/getJob": async ({ id }) => {
        if (id === "missing") throw new TransportError(404, "not_found", "job missing not found");
        return { id } as never;
      },
    },
    runStream: (_spec, sink, signal) => (options.runStream ? options.runStream(sink, signal) : Promise.resolve()),
    onReady: () => {
      readyCalls += 1;
      connection.notify("jobDetail/state/didChange", { jobId: "j1" });
    },
  });
  const settled = () => new Promise((resolve) => setImmediate(resolve));
  return { connection, posted, readyCalls: () => readyCalls, settled };
}

describe("extension/core/panelConnection", () => {
  it("holds host messages until the view says ready, then sends the state first", () => {
    const { connection, posted } = harness();
    connection.notify("endpointDetail/deployment/didChange", { deploymentId: "d" });
    assert.equal(posted.length, 0);
    connection.receive({ kind: "command", method: "webview/ready", params: {} });
    assert.deepEqual(
      posted.map((m) => (m.kind === "notification" ? m.method : m.kind)),
      ["jobDetail/state/didChange", "endpointDetail/deployment/didChange"],
    );
  });

  it("answers requests by id with a result or the upstream error", async () => {
    const { connection, posted, settled } = harness();
    connection.receive({ kind: "command", method: "webview/ready", params: {} });
    connection.receive({ kind: "request", id: 7, method: "api/getJob", params: { id: "j1" } });
    connection.receive({ kind: "request", id: 8, method: "api/getJob", params: { id: "missing" } });
    connection.receive({ kind: "request", id: 9, method: "api/nope", params: {} });
    await settled();
    const responses = posted.filter((m) => m.kind === "response");
    assert.deepEqual(
      responses.find((m) => m.id === 7),
      { kind: "response", id: 7, result: { id: "j1" } },
    );
    assert.deepEqual(responses.find((m) => m.id === 8)?.error, { status: 404, code: "not_found", message: "job missing not found" });
    assert.equal(responses.find((m) => m.id === 9)?.error?.code, "unknown_method");
  });

  it("ignores junk messages", () => {
    const { connection, posted } = harness();
    for (const junk of [null, 3, "x", {}, { kind: "request", method: "api/getJob" }]) connection.receive(junk);
    assert.equal(posted.length, 0);
  });

  it("opens a stream: response with the id first, then data, interruptions and the end", async () => {
    const { connection, posted, settled } = harness({
      runStream: async (sink) => {
        sink.data("a");
        sink.interrupted();
        sink.data("b");
      },
    });
    connection.receive({ kind: "command", method: "webview/ready", params: {} });
    connection.receive({ kind: "request", id: 1, method: "stream/open", params: { kind: "training" } });
    await settled();
    const trail = posted.slice(1).map((m) => (m.kind === "response" ? `response:${JSON.stringify(m.result)}` : `${m.method}:${JSON.stringify(m.params)}`));
    assert.deepEqual(trail, [
      'response:{"streamId":"s1"}',
      'stream/didReceive:{"streamId":"s1","data":"a"}',
      'stream/didInterrupt:{"streamId":"s1"}',
      'stream/didReceive:{"streamId":"s1","data":"b"}',
      'stream/didEnd:{"streamId":"s1"}',
    ]);
  });

  it("ends a failed stream with its error, and a closed stream silently", async () => {
    let aborted = false;
    let release!: () => void;
    const { connection, posted, settled } = harness({
      runStream: (_sink, signal) =>
        new Promise<void>((resolve, reject) => {
          signal.addEventListener("abort", () => {
            aborted = true;
            resolve();
          });
          release = () => reject(new TransportError(409, "training_in_progress", "busy"));
        }),
    });
    connection.receive({ kind: "command", method: "webview/ready", params: {} });
    connection.receive({ kind: "request", id: 1, method: "stream/open", params: { kind: "training" } });
    connection.receive({ kind: "request", id: 2, method: "stream/open", params: { kind: "training" } });
    await settled();
    connection.receive({ kind: "command", method: "stream/close", params: { streamId: "s1" } });
    release();
    await settled();
    assert.equal(aborted, true);
    const ends = posted.filter((m) => m.kind === "notification" && m.method === "stream/didEnd").map((m) => m.kind === "notification" && m.params);
    assert.deepEqual(ends, [{ streamId: "s2", error: { status: 409, code: "training_in_progress", message: "busy" } }]);
  });

  it("a view that reloads says ready again: its old streams stop and it gets its state again", async () => {
    let aborts = 0;
    const { connection, readyCalls, settled } = harness({
      runStream: (_sink, signal) => new Promise<void>((resolve) => signal.addEventListener("abort", () => (aborts++, resolve()))),
    });
    connection.receive({ kind: "command", method: "webview/ready", params: {} });
    connection.receive({ kind: "request", id: 1, method: "stream/open", params: { kind: "jobEvents", jobId: "j" } });
    await settled();
    connection.receive({ kind: "command", method: "webview/ready", params: {} });
    assert.equal(aborts, 1);
    assert.equal(readyCalls(), 2);
    connection.dispose();
  });
});
