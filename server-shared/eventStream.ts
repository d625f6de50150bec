/**
 * The one way svc's HTTP servers (the cloud and the studio) write an event stream: the same
 * headers (no caching or transforming proxies, no buffering by nginx), sent at once, and
 * backpressure, so a slow reader slows the writer down instead of filling the server's memory.
 * Node built-ins only: both servers may import it (ARCHITECTURE.md, Folders).
 */
import type { ServerResponse } from "node:http";

type Headers = Record<string, string | number | string[] | undefined>;

/**
 * Sets the status and headers of an event stream and, unless `flush` is false, sends them right
 * away. A writer that has its first event in hand passes false: the headers then leave in the same
 * socket write as that event (Node joins a response's writes within one turn of the event loop,
 * but flushed headers would be a write, and a read for the client, of their own). `headers` are
 * those already decided for the answer (CORS, the request id): they go out with the stream's own.
 */
export function writeEventStreamHead(
  res: ServerResponse,
  status = 200,
  contentType = "text/event-stream; charset=utf-8",
  flush = true,
  headers: Headers = {},
): void {
  res.writeHead(status, {
    ...headers,
    "content-type": contentType,
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    // Proxies such as nginx would otherwise buffer the stream.
    "x-accel-buffering": "no",
    "x-content-type-options": "nosniff",
  });
  if (flush) res.flushHeaders();
}

/**
 * Resolves once the socket has taken what was written, or the response closed; at once when
 * nothing waits. Leaves no listener behind.
 */
export function drainedOrClosed(res: ServerResponse): Promise<void> {
  if (!res.writableNeedDrain || res.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.once("drain", done);
    res.once("close", done);
  });
}
