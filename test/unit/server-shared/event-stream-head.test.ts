/**
 * The event-stream head on a real node:http server and socket (issue 15): by default the headers
 * go out at once (a stream whose first event may take a while shows its 200 right away); a writer
 * with its first event in hand keeps them back, so they leave in one socket write with that event.
 */
import assert from "node:assert/strict";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { writeEventStreamHead } from "../../../server-shared/eventStream.js";

describe("server-shared: writeEventStreamHead", () => {
  let server: http.Server;
  let url: string;
  /** Bytes the socket had been given right after the head, and after the first event was written. */
  let written: { afterHead: number; afterFirstEvent: number } | null;

  before(async () => {
    server = http.createServer((req, res) => {
      const flush = req.url !== "/with-first-event";
      // Counted from here: a kept-alive socket carries earlier responses' bytes.
      const before = res.socket!.bytesWritten;
      writeEventStreamHead(res, 200, undefined, flush);
      const afterHead = res.socket!.bytesWritten - before;
      res.write("data: first\n\n");
      written = { afterHead, afterFirstEvent: res.socket!.bytesWritten - before };
      res.end("data: [DONE]\n\n");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const read = async (path: string) => {
    written = null;
    const res = await fetch(url + path);
    assert.equal(res.headers.get("content-type"), "text/event-stream; charset=utf-8");
    assert.equal(await res.text(), "data: first\n\ndata: [DONE]\n\n");
    return written!;
  };

  it("sends the headers at once by default", async () => {
    assert.ok((await read("/")).afterHead > 0);
  });

  it("keeps them for the first event when the writer has one in hand", async () => {
    const { afterHead, afterFirstEvent } = await read("/with-first-event");
    assert.equal(afterHead, 0, "nothing handed to the socket by the head alone");
    assert.ok(afterFirstEvent > "data: first\n\n".length, "headers and the first event go out together");
  });
});
