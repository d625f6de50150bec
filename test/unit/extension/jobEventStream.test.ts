import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { streamJobEvents } from "../../../extension/core/jobEventStream.js";
import type { JobStreamEvent } from "../../../ui-shared/eventLog.js";

/**
 * A stand-in for the studio's SSE relay: the first connection sends two events and drops, the
 * second must carry Last-Event-ID and gets the rest and `end`.
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
      res.write('id: 1\nevent: training.started\ndata: {"model":"svc-tiny"}\n\n');
      res.write('id: 2\nevent: training.log\ndata: {"step":1,"loss":2.5}\n\n');
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
      let interruptions = 0;
      await streamJobEvents(
        { studioUrl: server.url, token: "tok", jobId: "j1", retryDelayMs: 10 },
        { event: (e) => events.push(e), interrupted: () => interruptions++ },
        new AbortController().signal,
      );
      assert.deepEqual(events.map((e) => [e.id, e.type]), [["1", "training.started"], ["2", "training.log"], ["3", "training.log"]]);
      assert.deepEqual(events[2]!.data, { step: 2, loss: 2.1 });
      assert.equal(events[0]!.raw, '{"model":"svc-tiny"}');
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
        streamJobEvents({ studioUrl: server.url, token: "t", jobId: "missing" }, { event: () => {}, interrupted: () => {} }, new AbortController().signal),
        { status: 404, message: "job not found" },
      );
    } finally {
      await server.close();
    }
  });
});
