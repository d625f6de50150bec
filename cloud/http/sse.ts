/** Minimal Server-Sent Events writer over a hijacked Fastify reply. */
import type { FastifyReply, FastifyRequest } from "fastify";

export interface SseStream {
  send(event: { id?: number | string; event?: string; data: unknown }): void;
  comment(text: string): void;
  close(): void;
  /** Ends the stream and its connection (shutdown: the socket must not linger as keep-alive). */
  end(): void;
  /**
   * Resolves once the socket has taken what was written (or the stream closed), after giving the
   * event loop a turn: a long backlog goes out page by page, the first bytes leave before the last
   * page is read, and other requests are served in between.
   */
  drained(): Promise<void>;
  /** Resolves when the client goes away or close() is called. */
  closed: Promise<void>;
  isClosed(): boolean;
}

const HEARTBEAT_MS = 15_000;

/** Takes the response over from Fastify and sends the headers of an event stream right away. */
export function beginEventStream(reply: FastifyReply): FastifyReply["raw"] {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    // Proxies such as nginx would otherwise buffer the stream.
    "x-accel-buffering": "no",
  });
  res.flushHeaders();
  return res;
}

export function openSse(request: FastifyRequest, reply: FastifyReply): SseStream {
  const res = beginEventStream(reply);
  let closed = false;
  let resolveClosed!: () => void;
  const closedPromise = new Promise<void>((resolve) => (resolveClosed = resolve));
  // Comments keep proxies and idle timers from cutting a quiet stream.
  const heartbeat = setInterval(() => stream.comment("ping"), HEARTBEAT_MS);
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(heartbeat);
    resolveClosed();
  };
  request.raw.on("close", finish);
  res.on("close", finish);
  const stream: SseStream = {
    send({ id, event, data }) {
      if (closed) return;
      let frame = "";
      if (id !== undefined) frame += `id: ${id}\n`;
      if (event) frame += `event: ${event}\n`;
      const text = typeof data === "string" ? data : JSON.stringify(data);
      for (const line of text.split("\n")) frame += `data: ${line}\n`;
      res.write(frame + "\n");
    },
    comment(text) {
      if (!closed) res.write(`: ${text}\n\n`);
    },
    close() {
      if (closed) return;
      finish();
      res.end();
    },
    end() {
      if (closed) return;
      finish();
      // Half-close after the last chunk is flushed, so the server's close() has nothing to wait for.
      res.end(() => res.socket?.end());
    },
    drained() {
      return new Promise<void>((resolve) => {
        if (closed || !res.writableNeedDrain) {
          setImmediate(resolve);
          return;
        }
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve();
        };
        res.once("drain", done);
        res.once("close", done);
      });
    },
    closed: closedPromise,
    isClosed: () => closed,
  };
  return stream;
}
