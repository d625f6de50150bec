import assert from "node:assert/strict";
import { HttpTransport, runFailedMessage } from "../../../ui-shared/studioHttpClient.js";
import { TransportError } from "../../../ui-shared/transport.js";

type FetchCall = { url: string; init: RequestInit };

/** Replaces global fetch for one test; `respond` builds the Response for each call. */
function stubFetch(respond: (call: FetchCall) => Response): FetchCall[] {
  const calls: FetchCall[] = [];
  globalThis.fetch = (async (url: string, init: RequestInit) => {
    const call = { url, init };
    calls.push(call);
    return respond(call);
  }) as typeof fetch;
  return calls;
}

/** A streamed body delivering `chunks` one by one, like a server flushing as it goes. */
function streamed(chunks: string[], contentType: string): Response {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return new Response(body, { headers: { "content-type": contentType } });
}

describe("ui-shared/studioHttpClient", () => {
  const realFetch = globalThis.fetch;
  afterEach(() => {
    globalThis.fetch = realFetch;
  });

  it("sends the studio token header and JSON bodies", async () => {
    const calls = stubFetch(() => Response.json({ id: "d1" }));
    const transport = new HttpTransport("tok-123");
    await transport.updateDeployment("d 1", { enabled: false });
    assert.equal(calls[0].url, "/api/deployments/d%201");
    assert.equal(calls[0].init.method, "PATCH");
    assert.deepEqual(calls[0].init.headers, { "X-Svc-Studio-Token": "tok-123", "Content-Type": "application/json" });
    assert.equal(calls[0].init.body, `{"enabled":false}`);
  });

  it("turns the error envelope into a TransportError with the upstream status and message", async () => {
    stubFetch(() => Response.json({ error: { code: "slug_taken", message: "The slug is taken." } }, { status: 409 }));
    await assert.rejects(
      new HttpTransport("t").createDeployment({ slug: "x", target: { kind: "base_model", name: "m" } }),
      (e: unknown) => e instanceof TransportError && e.status === 409 && e.code === "slug_taken" && e.message === "The slug is taken.",
    );
  });

  it("keeps plain-text error bodies readable", async () => {
    stubFetch(() => new Response("upstream exploded", { status: 502 }));
    await assert.rejects(new HttpTransport("t").listJobs(), /upstream exploded/);
  });

  it("treats 204 as success for revoke", async () => {
    const calls = stubFetch(() => new Response(null, { status: 204 }));
    await new HttpTransport("t").revokeKey("d1", "k1");
    assert.equal(calls[0].url, "/api/deployments/d1/keys/k1");
    assert.equal(calls[0].init.method, "DELETE");
  });

  it("streams training output as it arrives", async () => {
    stubFetch(() => streamed(["Building…\n", "step 1\n", "done\n"], "text/plain"));
    const chunks: string[] = [];
    await new HttpTransport("t").runTraining((text) => chunks.push(text));
    assert.equal(chunks.join(""), "Building…\nstep 1\ndone\n");
  });

  it("runTraining rejects with the exit code when svc start failed (the studio says how the run ended)", async () => {
    const respond = (exitCode: number) => (call: FetchCall) => {
      if (call.init.method === "POST") {
        const response = streamed(["svc: data/train.jsonl does not exist\n"], "text/plain");
        response.headers.set("x-svc-run-id", "run-1");
        return response;
      }
      return Response.json({ running: false, last: { id: "run-1", exitCode } });
    };
    const calls = stubFetch(respond(1));
    await assert.rejects(
      new HttpTransport("t").runTraining(() => {}),
      (e: unknown) =>
        e instanceof TransportError && e.code === "run_failed" && e.message === "The run failed: svc start exited with code 1. Its output below says why.",
    );
    assert.deepEqual(
      calls.map((c) => `${c.init.method} ${c.url}`),
      ["POST /api/train", "GET /api/train"],
    );
    stubFetch(respond(0));
    await new HttpTransport("t").runTraining(() => {});
  });

  it("stopTraining is DELETE /api/train; a stopped run (exit 130) reads as stopped, not failed", async () => {
    const calls = stubFetch(() => Response.json({ running: false, last: { id: "run-1", exitCode: 130 } }));
    assert.deepEqual(await new HttpTransport("t").stopTraining(), { running: false, last: { id: "run-1", exitCode: 130 } });
    assert.deepEqual(
      calls.map((c) => `${c.init.method} ${c.url}`),
      ["DELETE /api/train"],
    );
    assert.equal(runFailedMessage(130), "The run was stopped: its job was cancelled.");
  });

  it("streams chat deltas until [DONE], across chunk boundaries", async () => {
    const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
    const whole = chunk("Hel") + chunk("lo") + "data: [DONE]\n\n" + chunk("ignored");
    const calls = stubFetch(() => streamed([whole.slice(0, 17), whole.slice(17, 60), whole.slice(60)], "text/event-stream"));
    let text = "";
    await new HttpTransport("t").streamChat({ target: { kind: "adapter", jobId: "j" }, messages: [{ role: "user", content: "hi" }] }, (d) => (text += d));
    assert.equal(text, "Hello");
    assert.equal(calls[0].url, "/api/inference/chat");
    assert.deepEqual(JSON.parse(String(calls[0].init.body)).target, { kind: "adapter", jobId: "j" });
  });

  it("asks for a streamed chat (stream: true in the body)", async () => {
    const calls = stubFetch(() => streamed(["data: [DONE]\n\n"], "text/event-stream"));
    await new HttpTransport("t").streamChat({ target: { kind: "base_model", name: "m" }, messages: [], maxTokens: 8 }, () => {});
    const body = JSON.parse(String(calls[0].init.body));
    assert.equal(body.stream, true);
    assert.equal(body.maxTokens, 8);
  });

  it("shows a whole JSON completion when the server answers without streaming", async () => {
    const completion = { object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content: "A whole reply" } }] };
    stubFetch(() => Response.json(completion));
    let text = "";
    await new HttpTransport("t").streamChat({ target: { kind: "base_model", name: "m" }, messages: [] }, (d) => (text += d));
    assert.equal(text, "A whole reply");
  });

  it("asks for the reply's token counts and returns them from the last chunk (the Playground's tokens/s)", async () => {
    const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`;
    const usage = `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 9, completion_tokens: 2, total_tokens: 11 } })}\n\n`;
    const calls = stubFetch(() => streamed([chunk("Hi"), chunk("!"), usage, "data: [DONE]\n\n"], "text/event-stream"));
    let text = "";
    const counted = await new HttpTransport("t").streamChat({ target: { kind: "base_model", name: "m" }, messages: [] }, (d) => (text += d));
    assert.equal(text, "Hi!");
    assert.deepEqual(counted, { promptTokens: 9, completionTokens: 2 });
    assert.deepEqual(JSON.parse(String(calls[0].init.body)).stream_options, { include_usage: true });
    // A server that sends no usage: nothing is made up.
    stubFetch(() => streamed([chunk("Hi"), "data: [DONE]\n\n"], "text/event-stream"));
    assert.equal(await new HttpTransport("t").streamChat({ target: { kind: "base_model", name: "m" }, messages: [] }, () => {}), undefined);
  });

  it("saves a download under the studio's name, fetched with the token header and the route's query", async () => {
    const calls = stubFetch(
      () => new Response("GGUF", { headers: { "content-disposition": `attachment; filename="x.gguf"; filename*=UTF-8''run-%C3%A9.gguf` } }),
    );
    const response = await new HttpTransport("tok").openDownload({ route: "downloadAdapter", params: { id: "j 1" }, query: { format: "peft", step: 20 } });
    assert.equal(calls[0].url, "/api/jobs/j%201/adapter?format=peft&step=20");
    assert.equal((calls[0].init.headers as Record<string, string>)["X-Svc-Studio-Token"], "tok");
    assert.equal(await response.text(), "GGUF");
    stubFetch(() => Response.json({ error: { code: "not_found", message: "job j has no checkpoint at step 3" } }, { status: 404 }));
    await assert.rejects(
      new HttpTransport("t").openDownload({ route: "downloadAdapter", params: { id: "j" }, query: { format: "gguf", step: 3 } }),
      (e: TransportError) => e.status === 404 && e.message === "job j has no checkpoint at step 3",
    );
  });

  it("reports an error chunk inside the chat stream", async () => {
    stubFetch(() => streamed([`data: {"error":{"message":"model not loaded"}}\n\n`], "text/event-stream"));
    await assert.rejects(
      new HttpTransport("t").streamChat({ target: { kind: "base_model", name: "m" }, messages: [] }, () => {}),
      /model not loaded/,
    );
  });
});

/** Minimal EventSource double: records listeners so the test can play server frames. */
class FakeEventSource {
  static last: FakeEventSource | undefined;
  readonly listeners = new Map<string, (e: { data: string; lastEventId: string }) => void>();
  onerror: (() => void) | null = null;
  closed = false;
  constructor(readonly url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, listener: (e: { data: string; lastEventId: string }) => void) {
    this.listeners.set(type, listener);
  }
  close() {
    this.closed = true;
  }
  emit(type: string, data: string, id = "") {
    this.listeners.get(type)?.({ data, lastEventId: id });
  }
}

describe("ui-shared/studioHttpClient job events", () => {
  const realEventSource = (globalThis as { EventSource?: unknown }).EventSource;
  beforeEach(() => {
    (globalThis as { EventSource?: unknown }).EventSource = FakeEventSource;
  });
  afterEach(() => {
    (globalThis as { EventSource?: unknown }).EventSource = realEventSource;
  });

  it("carries the token in the URL, parses named events, reports errors and closes on end", () => {
    const seen: string[] = [];
    new HttpTransport("t k").subscribeJobEvents("job/1", {
      onEvent: (e) => seen.push(`${e.id}:${e.type}:${String(e.data.step)}`),
      onEvents: (events) => seen.push(`batch[${events.map((e) => `${e.id}:${e.type}:${String(e.data.step)}`).join(" ")}]`),
      onError: () => seen.push("error"),
      onEnd: () => seen.push("end"),
    });
    const source = FakeEventSource.last!;
    assert.equal(source.url, "/api/jobs/job%2F1/events?studioToken=t%20k&batch=1");
    source.emit("batch", `[{"seq":2,"type":"training.log","data":{"step":8,"loss":2.5}},{"seq":3,"type":"training.log","data":{"step":9}}]`, "3");
    source.emit("training.log", `{"step":10,"loss":2.31}`, "4");
    source.onerror?.();
    source.emit("end", "{}");
    source.emit("training.log", `{"step":11}`, "5"); // After end: ignored.
    assert.deepEqual(seen, ["batch[2:training.log:8 3:training.log:9]", "4:training.log:10", "error", "end"]);
    assert.equal(source.closed, true);
  });
});
