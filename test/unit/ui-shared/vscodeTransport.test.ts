import assert from "node:assert/strict";
import type { RequestMessage } from "../../../ui-shared/protocol/common.js";
import { VsCodeTransport } from "../../../webview/transport/vscode.js";
import { TransportError } from "../../../ui-shared/transport.js";

/** A fake host: records what the view posts and lets the test answer through a real EventTarget. */
function harness(timeoutMs = 1000) {
  const posted: unknown[] = [];
  const target = new EventTarget();
  const transport = new VsCodeTransport({ postMessage: (m) => posted.push(m) }, target as unknown as Window, timeoutMs);
  const send = (data: unknown) => target.dispatchEvent(Object.assign(new Event("message"), { data }));
  const lastRequest = () => posted.at(-1) as RequestMessage;
  return { posted, transport, send, lastRequest };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("webview/transport/vscode", () => {
  it("sends ready as a command", () => {
    const { posted, transport } = harness();
    transport.ready();
    assert.deepEqual(posted, [{ kind: "command", method: "webview/ready", params: {} }]);
  });

  it("matches responses to requests by id, with results and errors", async () => {
    const { transport, send, posted } = harness();
    const jobs = transport.listJobs();
    const job = transport.getJob("j1");
    const [first, second] = posted as RequestMessage[];
    assert.equal(first.method, "api/listJobs");
    assert.deepEqual(second.params, { id: "j1" });
    send({ kind: "response", id: second.id, error: { status: 404, code: "not_found", message: "No such job" } });
    send({ kind: "response", id: first.id, result: [] });
    assert.deepEqual(await jobs, []);
    await assert.rejects(job, (e: unknown) => e instanceof TransportError && e.status === 404 && e.message === "No such job");
  });

  it("asks the host for an endpoint's usage report and its export as the studio's routes (the shared usage panel)", async () => {
    const { transport, send, posted } = harness();
    const report = transport.usageReport("d1", "month");
    const request = posted[0] as RequestMessage;
    assert.equal(request.method, "api/usageReport");
    assert.deepEqual(request.params, { id: "d1", range: "month" });
    const answer = { range: "month", bucketSeconds: 86_400, from: "2026-10-29T00:00:00.000Z", to: "2026-11-28T00:00:00.000Z", rows: [], totals: [] };
    send({ kind: "response", id: request.id, result: answer });
    assert.deepEqual(await report, answer);
    const saved = transport.saveDownload({ route: "downloadUsage", params: { id: "d1", range: "day" }, query: { format: "csv" } });
    const save = posted[1] as RequestMessage;
    assert.equal(save.method, "host/saveDownload");
    assert.deepEqual(save.params, { route: "downloadUsage", params: { id: "d1", range: "day" }, query: { format: "csv" } });
    send({ kind: "response", id: save.id, result: { path: "/tmp/usage-bot-day.csv" } });
    await saved;
  });

  it("posts a view's reactive state (Proxies, as Svelte's $state) as plain data the webview can clone", async () => {
    const posted: unknown[] = [];
    const events = new EventTarget();
    // What a webview's postMessage does to a message: a structured clone, which refuses a Proxy.
    const transport = new VsCodeTransport({ postMessage: (m) => posted.push(structuredClone(m)) }, events as unknown as Window);
    const target = new Proxy({ kind: "adapter" as const, jobId: "j1" }, {});
    const chat = transport.streamChat({ target, messages: [new Proxy({ role: "user" as const, content: "hi" }, {})] }, () => {});
    const request = posted[0] as RequestMessage;
    assert.deepEqual(request.params, { kind: "chat", request: { target: { kind: "adapter", jobId: "j1" }, messages: [{ role: "user", content: "hi" }] } });
    // Answered, so no request (and no 30 s timer) outlives the test.
    events.dispatchEvent(
      Object.assign(new Event("message"), { data: { kind: "response", id: request.id, error: { status: 503, code: "unavailable", message: "no host" } } }),
    );
    await assert.rejects(chat, (e: unknown) => e instanceof TransportError && e.status === 503);
  });

  it("times out unanswered requests", async () => {
    const { transport } = harness(20);
    await assert.rejects(transport.listModels(), (e: unknown) => e instanceof TransportError && e.code === "timeout");
  });

  it("delivers notifications to subscribers", () => {
    const { transport, send } = harness();
    const seen: unknown[] = [];
    const off = transport.onNotification("jobDetail/state/didChange", (p) => seen.push(p));
    send({ kind: "notification", method: "jobDetail/state/didChange", params: { jobId: "j1" } });
    off();
    send({ kind: "notification", method: "jobDetail/state/didChange", params: { jobId: "j2" } });
    assert.deepEqual(seen, [{ jobId: "j1" }]);
  });

  it("streams job events, interruptions and the end", async () => {
    const { transport, send, lastRequest } = harness();
    const log: string[] = [];
    transport.subscribeJobEvents("j1", {
      onEvent: (e) => log.push(`event ${e.type}`),
      onEvents: (events) => log.push(`events ${events.map((e) => e.id).join(",")}`),
      onError: () => log.push("error"),
      onEnd: () => log.push("end"),
    });
    const open = lastRequest();
    assert.deepEqual(open.params, { kind: "jobEvents", jobId: "j1" });
    send({ kind: "response", id: open.id, result: { streamId: "s1" } });
    await tick();
    const logEvent = (id: string) => ({ id, type: "training.log", raw: "{}", data: {} });
    send({ kind: "notification", method: "stream/didReceive", params: { streamId: "s1", data: [logEvent("1"), logEvent("2")] } });
    send({ kind: "notification", method: "stream/didReceive", params: { streamId: "s1", data: { id: "3", type: "training.started", raw: "{}", data: {} } } });
    send({ kind: "notification", method: "stream/didInterrupt", params: { streamId: "s1" } });
    send({ kind: "notification", method: "stream/didEnd", params: { streamId: "s1" } });
    await tick();
    assert.deepEqual(log, ["events 1,2", "event training.started", "error", "end"]);
  });

  it("runTraining resolves at the end and rejects with the stream's error", async () => {
    const { transport, send, lastRequest } = harness();
    const chunks: string[] = [];
    const run = transport.runTraining((t) => chunks.push(t));
    send({ kind: "response", id: lastRequest().id, result: { streamId: "t1" } });
    await tick();
    send({ kind: "notification", method: "stream/didReceive", params: { streamId: "t1", data: "step 1\n" } });
    send({ kind: "notification", method: "stream/didEnd", params: { streamId: "t1" } });
    await run;
    assert.deepEqual(chunks, ["step 1\n"]);

    const busy = transport.runTraining(() => {});
    send({ kind: "response", id: lastRequest().id, result: { streamId: "t2" } });
    await tick();
    send({ kind: "notification", method: "stream/didEnd", params: { streamId: "t2", error: { status: 409, code: "busy", message: "A run is in flight" } } });
    await assert.rejects(busy, /A run is in flight/);
  });

  it("a chat stream's last data is its token counts, which streamChat returns", async () => {
    const { transport, send, lastRequest } = harness();
    let text = "";
    const chat = transport.streamChat({ target: { kind: "base_model", name: "m" }, messages: [] }, (d) => (text += d));
    send({ kind: "response", id: lastRequest().id, result: { streamId: "c1" } });
    await tick();
    send({ kind: "notification", method: "stream/didReceive", params: { streamId: "c1", data: "Hi" } });
    send({ kind: "notification", method: "stream/didReceive", params: { streamId: "c1", data: { usage: { promptTokens: 3, completionTokens: 1 } } } });
    send({ kind: "notification", method: "stream/didEnd", params: { streamId: "c1" } });
    assert.deepEqual(await chat, { promptTokens: 3, completionTokens: 1 });
    assert.equal(text, "Hi");
  });

  it("a save waits on the user: no timeout, however long the dialog stays open", async () => {
    const { transport, send, lastRequest } = harness(20);
    const saving = transport.saveDownload({ route: "downloadAdapter", params: { id: "j1" }, query: { format: "gguf" } });
    const request = lastRequest();
    assert.equal(request.method, "host/saveDownload");
    assert.deepEqual(request.params, { route: "downloadAdapter", params: { id: "j1" }, query: { format: "gguf" } });
    await new Promise((r) => setTimeout(r, 60)); // three times the request timeout
    send({ kind: "response", id: request.id, result: { path: "/tmp/x.gguf" } });
    await saving;
  });

  it("closing a stream tells the host", async () => {
    const { transport, send, lastRequest, posted } = harness();
    const controller = new AbortController();
    const chat = transport.streamChat({ target: { kind: "base_model", name: "m" }, messages: [] }, () => {}, controller.signal);
    send({ kind: "response", id: lastRequest().id, result: { streamId: "c1" } });
    await tick();
    controller.abort();
    await chat;
    assert.deepEqual(posted.at(-1), { kind: "command", method: "stream/close", params: { streamId: "c1" } });
  });
});
