import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Readable, Writable } from "node:stream";
import { finished, pipeline } from "node:stream/promises";
import { stallTimeout } from "../../../cloud/workers/stallTimeout.js";

/** A server that sends `chunks` pieces, one every `everyMs`, then either ends or stalls with the socket open. */
async function trickle(chunks: number, everyMs: number, thenStall: boolean): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "application/octet-stream" });
    let sent = 0;
    const timer = setInterval(() => {
      res.write(Buffer.alloc(1024));
      if (++sent < chunks) return;
      clearInterval(timer);
      if (!thenStall) res.end();
    }, everyMs);
    res.on("close", () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

async function download(url: string, idleMs: number): Promise<number> {
  const stall = stallTimeout(idleMs, "downloading the test file");
  let bytes = 0;
  try {
    const res = await fetch(url, { signal: stall.signal });
    const sink = new Writable({ write: (chunk: Buffer, _e, cb) => ((bytes += chunk.length), cb()) });
    await pipeline(Readable.fromWeb(res.body as import("node:stream/web").ReadableStream), stall.through(), sink, { signal: stall.signal });
    return bytes;
  } catch (err) {
    throw stall.signal.aborted ? stall.signal.reason : err;
  } finally {
    stall.done();
  }
}

describe("worker transfers: a stall deadline, not a total one", () => {
  it("aborts a transfer that stops sending, saying what stalled", async () => {
    const server = await trickle(3, 20, true);
    try {
      await assert.rejects(download(server.url, 300), /downloading the test file stalled: no data for 300 ms/);
    } finally {
      await server.close();
    }
  });

  it("lets a steady transfer run longer than the stall deadline", async () => {
    // 20 chunks 40 ms apart take about 0.8 s, twice the 400 ms deadline, which each chunk re-arms.
    const server = await trickle(20, 40, false);
    try {
      assert.equal(await download(server.url, 400), 20 * 1024);
    } finally {
      await server.close();
    }
  });

  it("is over once done: bytes that still pass through neither abort it nor hold a timer", async () => {
    const stall = stallTimeout(50, "uploading the test file");
    stall.done();
    const through = stall.through();
    through.resume();
    through.end(Buffer.alloc(1024)); // a request body still draining after the answer came
    await finished(through);
    // Twice the deadline: a timer those bytes armed would have fired, and kept the process alive until it did
    // (a worker stopped after a refused upload lingered that long).
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(stall.signal.aborted, false);
  });
});
