/** Minimal Server-Sent Events writer over a hijacked Fastify reply. */
import type { FastifyReply, FastifyRequest } from "fastify";
import { drainedOrClosed, writeEventStreamHead } from "../../server-shared/eventStream.js";

export interface SseStream {
  send(event: { id?: number | string; event?: string; data: unknown }): void;
  comment(text: string): void;
  /**
   * Hands what was written to the socket now. Node otherwise holds a response's writes until the
   * end of the current tick (it corks the socket to join them), which lets an answer written later
   * in the same tick, on another connection, leave first.
   */
  flush(): void;
  close(): void;
  /** Ends the stream and its connection (shutdown: the socket must not linger as keep-alive). */
  end(): void;
  /**
   * Resolves once the socket has taken what was written (or the stream closed), after giving the
   * event loop a turn: a long backlog goes out page by page, the first bytes leave before the last
   * page is read, and other requests are served in between; a slow reader holds the writer back.
   */
  drained(): Promise<void>;
  /** Bytes written but not yet taken by the socket (what a slow reader makes the server hold). */
  bufferedBytes(): number;
  /** Resolves when the client goes away or close() is called. */
  closed: Promise<void>;
  isClosed(): boolean;
}

const HEARTBEAT_MS = 15_000;

/**
 * Takes the response over from Fastify and sends the headers of an event stream: right away, or
 * with the first write when `firstEventReady` (the caller writes its first event in this turn).
 */
export function beginEventStream(reply: FastifyReply, { firstEventReady = false }: { firstEventReady?: boolean } = {}): FastifyReply["raw"] {
  // Headers set on the reply so far (CORS, x-request-id, x-svc-ignored-fields) live in Fastify,
  // not on the raw response: a hijacked reply would leave them behind, so they are carried over.
  const headers = reply.getHeaders();
  reply.hijack();
  const res = reply.raw;
  writeEventStreamHead(res, 200, undefined, !firstEventReady, headers);
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
    flush() {
      // Every write corks the socket once, to be uncorked on the next tick; uncorking now sends it.
      while (res.socket?.writableCorked) res.socket.uncork();
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
    async drained() {
      if (!closed) await drainedOrClosed(res);
      await new Promise((resolve) => setImmediate(resolve));
    },
    bufferedBytes: () => res.writableLength,
    closed: closedPromise,
    isClosed: () => closed,
  };
  return stream;
}
