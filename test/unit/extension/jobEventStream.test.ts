import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { streamJobEvents } from "../../../extension/core/jobEventStream.js";
import { rawText, type JobStreamEvent } from "../../../ui-shared/eventLog.js";

/**
 * A stand-in for the studio's SSE relay: the first connection sends a batch of two events, half of
 * a second batch, and drops; the second must carry Last-Event-ID and gets the rest and `end`.
 */
async function sseServer(): Promise<{ url: string; lastEventIds: (string | undefined)[]; tokens: (string | undefined)[]; close(): Promise<void> }> {
  const lastEventIds: (string | undefined)[] = [];
  const tokens: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    lastEventIds.push(req.headers["last-event-id"] as string | undefined);
    tokens.push(req.headers["x-svc-studio-token"] as string | undefined);
    if (req.url?.includes("/missing/")) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: { code: "not_found", message: "job not found" } }));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (lastEventIds.length === 1) {
      res.write(
        'id: 2\nevent: batch\ndata: [{"seq":1,"type":"training.started","data":{"model":"svc-tiny"}},{"seq":2,"type":"training.log","data":{"step":1,"loss":2.5}}]\n\n',
      );
      // A batch cut off mid-frame is never dispatched: the resume must start after id 2.
      res.write('id: 4\nevent: batch\ndata: [{"seq":3,"type":"training.log","data":{"step":2,"loss":2.1}},');
      res.end(); // the connection closes before the server sent `end`: a break
      return;
    }
    res.write(': heartbeat\n\nid: 3\nevent: training.log\ndata: {"step":2,"loss":2.1}\n\n');
    res.end("event: end\ndata: {}\n\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lastEventIds,
    tokens,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("extension/core/jobEventStream", () => {
  it("reports a break, resumes with Last-Event-ID and stops at end", async () => {
    const server = await sseServer();
    try {
      const events: JobStreamEvent[] = [];
      const deliveries: string[] = [];
      let interruptions = 0;
      await streamJobEvents(
        { studioUrl: server.url, token: "tok", jobId: "j1", retryDelayMs: 10 },
        {
          event: (e) => {
            events.push(e);
            deliveries.push("event");
          },
          events: (batch) => {
            events.push(...batch);
            deliveries.push(`batch of ${batch.length}`);
          },
          interrupted: () => interruptions++,
        },
        new AbortController().signal,
      );
      // The batch frame reaches the panel as one delivery; the half-sent one never does.
      assert.deepEqual(deliveries, ["batch of 2", "event"]);
      assert.deepEqual(
        events.map((e) => [e.id, e.type]),
        [
          ["1", "training.started"],
          ["2", "training.log"],
          ["3", "training.log"],
        ],
      );
      assert.deepEqual(events[2]!.data, { step: 2, loss: 2.1 });
      assert.equal(rawText(events[0]!), '{"model":"svc-tiny"}');
      assert.equal(interruptions, 1);
      assert.deepEqual(server.lastEventIds, [undefined, "2"]);
      assert.deepEqual(server.tokens, ["tok", "tok"]);
    } finally {
      await server.close();
    }
  });

  it("rejects with the studio's error for an unknown job instead of retrying", async () => {
    const server = await sseServer();
    try {
      await assert.rejects(
        streamJobEvents(
          { studioUrl: server.url, token: "t", jobId: "missing" },
          { event: () => {}, events: () => {}, interrupted: () => {} },
          new AbortController().signal,
        ),
        { status: 404, message: "job not found" },
      );
    } finally {
      await server.close();
    }
  });
});
