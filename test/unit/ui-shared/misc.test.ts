import assert from "node:assert/strict";
import { compareHref, parseRoute, playgroundHref } from "../../../ui-shared/routes.js";
import { visibleWindow } from "../../../ui-shared/virtualWindow.js";
import { SseParser } from "../../../sdk/sseParser.js";
import { chunkDelta } from "../../../ui-shared/chatChunks.js";
import { keyLabelProblem } from "../../../ui-shared/format.js";

describe("ui-shared routes, window, sse, format", () => {
  it("parses the hash routes", () => {
    assert.deepEqual(parseRoute(""), { view: "overview" });
    assert.deepEqual(parseRoute("#/"), { view: "overview" });
    assert.deepEqual(parseRoute("#/jobs"), { view: "jobs" });
    assert.deepEqual(parseRoute("#/jobs/abc-1"), { view: "job", id: "abc-1" });
    assert.deepEqual(parseRoute("#/endpoints/"), { view: "endpoints" });
    assert.deepEqual(parseRoute("#/endpoints/d1"), { view: "endpoint", id: "d1" });
    assert.deepEqual(parseRoute("#/playground"), { view: "playground" });
    assert.equal(parseRoute("#/nope").view, "notFound");
  });

  it("parses the compare route and the Playground's job preset (query after the path)", () => {
    assert.deepEqual(parseRoute("#/compare?ids=a,b,%20c,,a"), { view: "compare", ids: ["a", "b", "c"] });
    assert.deepEqual(parseRoute("#/compare"), { view: "compare", ids: [] });
    assert.deepEqual(parseRoute(compareHref(["x-1", "y-2"])), { view: "compare", ids: ["x-1", "y-2"] });
    assert.deepEqual(parseRoute(playgroundHref("job-9")), { view: "playground", jobId: "job-9" });
    assert.deepEqual(parseRoute("#/playground?job="), { view: "playground" });
    assert.deepEqual(parseRoute("#/jobs?x=1"), { view: "jobs" });
    // VS Code's openExternal percent-encodes the fragment.
    assert.deepEqual(parseRoute("#%2Fplayground%3Fjob%3Djob-9"), { view: "playground", jobId: "job-9" });
  });

  it("computes the visible row window", () => {
    assert.deepEqual(visibleWindow(0, 300, 30, 10_000, 2), { start: 0, end: 12, padTop: 0, padBottom: (10_000 - 12) * 30 });
    const w = visibleWindow(3000, 300, 30, 10_000, 2);
    assert.equal(w.start, 98);
    assert.equal(w.end, 112);
    assert.deepEqual(visibleWindow(0, 300, 30, 0), { start: 0, end: 0, padTop: 0, padBottom: 0 });
  });

  it("parses SSE split across chunks, CRLF and multi-line data", () => {
    const parser = new SseParser();
    assert.deepEqual(parser.feed('data: {"a"'), []);
    // A trailing lone CR may be half of a CRLF, so the message completes with the next chunk.
    assert.deepEqual(parser.feed(":1}\r\n\r"), []);
    const got = parser.feed("\nid: 7\nevent: training.log\ndata: x\ndata: y\n\n: comment\n\ndata: [DONE]\n\n");
    assert.deepEqual(got, [
      { event: "message", data: `{"a":1}`, id: undefined },
      { event: "training.log", data: "x\ny", id: "7" },
      { event: "message", data: "[DONE]", id: "7" },
    ]);
  });

  it("SSE parser: any chunking gives the same messages (CR, LF, CRLF split anywhere)", () => {
    const stream = "id: 1\r\nevent: a\r\ndata: one\r\n\r\nid: 2\rdata: two\r\rdata: three\n\n: note\r\ndata: x\r\ndata: y\r\n\r\n";
    const whole = new SseParser().feed(stream);
    assert.deepEqual(whole, [
      { event: "a", data: "one", id: "1" },
      { event: "message", data: "two", id: "2" },
      { event: "message", data: "three", id: "2" },
      { event: "message", data: "x\ny", id: "2" },
    ]);
    for (let size = 1; size <= 7; size++) {
      const parser = new SseParser();
      const got = [];
      for (let i = 0; i < stream.length; i += size) got.push(...parser.feed(stream.slice(i, i + size)));
      assert.deepEqual(got, whole, `chunks of ${size}`);
    }
  });

  it("SSE parser: a multi-megabyte line in 64 KB chunks comes out whole", () => {
    const data = `[${Array.from({ length: 60_000 }, (_, i) => `{"seq":${i},"type":"training.log","data":{"step":${i},"loss":2.5}}`).join(",")}]`;
    const text = `id: 9\nevent: batch\ndata: ${data}\n\n`;
    const parser = new SseParser();
    const got = [];
    for (let i = 0; i < text.length; i += 65_536) got.push(...parser.feed(text.slice(i, i + 65_536)));
    assert.equal(got.length, 1);
    assert.equal(got[0].event, "batch");
    assert.equal(got[0].data, data);
  });

  it("extracts chat deltas", () => {
    assert.equal(chunkDelta(`{"choices":[{"delta":{"content":"Hi"}}]}`), "Hi");
    assert.equal(chunkDelta(`{"choices":[{"delta":{"role":"assistant"}}]}`), "");
    assert.equal(chunkDelta("garbage"), "");
  });

  it("validates key labels of 1 to 80 characters", () => {
    assert.ok(keyLabelProblem(""));
    assert.ok(keyLabelProblem("   "));
    assert.equal(keyLabelProblem("ci"), undefined);
    assert.equal(keyLabelProblem("x".repeat(80)), undefined);
    assert.ok(keyLabelProblem("x".repeat(81)));
  });
});
