import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { readEventStream } from "../../../sdk/eventStreamReader.js";

/**
 * The one resumable event-stream reader against a real loopback server that breaks the first
 * connection mid-stream: the reader reconnects with the last id it saw and gets the rest once.
 */
describe("readEventStream (SDK and extension)", () => {
  let server: http.Server;
  let url: string;
  const requests: (string | undefined)[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      if (req.url === "/missing") {
        res.writeHead(404).end();
        return;
      }
      const lastEventId = req.headers["last-event-id"] as string | undefined;
      requests.push(lastEventId);
      res.writeHead(200, { "content-type": "text/event-stream" });
      if (lastEventId === undefined) {
        res.write("id: 1\nevent: tick\ndata: one\n\n: a comment\nid: 2\nevent: tick\ndata: two\n\nid: 3\nevent: tick\nda");
        setImmediate(() => res.destroy()); // the break: event 3 is cut half way
        return;
      }
      const from = Number(lastEventId);
      for (let id = from + 1; id <= 4; id++) res.write(`id: ${id}\nevent: tick\ndata: ${["", "one", "two", "three", "four"][id]}\n\n`);
      res.end("event: end\ndata: {}\n\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const open = (path: string) => async (lastEventId: string | undefined, signal: AbortSignal) => {
    const response = await fetch(`${url}${path}`, { headers: lastEventId === undefined ? {} : { "last-event-id": lastEventId }, signal });
    if (!response.ok) throw Object.assign(new Error(`HTTP ${response.status}`), { status: response.status });
    return response;
  };

  it("resumes after a break from the last id it saw, each event once, and stops at end", async () => {
    let interruptions = 0;
    const seen: string[] = [];
    for await (const message of readEventStream(open("/events"), { retryDelayMs: () => 10, onInterrupted: () => interruptions++ }))
      seen.push(`${message.id}:${message.data}`);
    assert.deepEqual(seen, ["1:one", "2:two", "3:three", "4:four"]);
    assert.deepEqual(requests, [undefined, "2"], "the second request resumed after event 2");
    assert.equal(interruptions, 1);
  });

  it("gives up at once on an HTTP error status", async () => {
    let interruptions = 0;
    await assert.rejects(
      (async () => {
        for await (const _ of readEventStream(open("/missing"), { retryDelayMs: () => 10, onInterrupted: () => interruptions++ }));
      })(),
      /HTTP 404/,
    );
    assert.equal(interruptions, 0);
  });
});
