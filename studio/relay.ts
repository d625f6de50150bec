/**
 * Passing a streaming cloud response (SSE) through to the browser byte for byte: the studio adds
 * nothing and parses nothing, so ids, event names and heartbeats arrive exactly as the cloud sent
 * them, and the browser's own `Last-Event-ID` resume works through the relay. When the browser
 * goes away, the upstream request is aborted so the cloud stops streaming to nobody.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { drainedOrClosed, writeEventStreamHead } from "../server-shared/eventStream.js";

export async function relayStream(request: FastifyRequest, reply: FastifyReply, upstream: Response, upstreamAbort: AbortController): Promise<void> {
  reply.hijack();
  const res = reply.raw;
  writeEventStreamHead(res, upstream.status, upstream.headers.get("content-type") ?? undefined);
  const onClientGone = () => upstreamAbort.abort();
  request.raw.once("close", onClientGone);
  res.once("close", onClientGone);
  try {
    for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) {
      if (res.destroyed) break;
      // Respect backpressure: a slow browser slows the upstream read instead of filling memory.
      if (!res.write(chunk)) await drainedOrClosed(res);
    }
  } catch {
    // Upstream cut (cloud restart) or our own abort: ending the response lets EventSource
    // reconnect with Last-Event-ID, which the next relay passes on.
  } finally {
    request.raw.off("close", onClientGone);
    upstreamAbort.abort();
    if (!res.destroyed) res.end();
  }
}

/** The `Last-Event-ID` of a reconnecting EventSource, or `?lastEventId=` for clients that resume by hand. */
export function lastEventIdOf(request: FastifyRequest): number {
  const header = request.headers["last-event-id"];
  const query = (request.query as Record<string, unknown> | undefined)?.lastEventId;
  const raw = typeof header === "string" && header !== "" ? header : typeof query === "string" ? query : "0";
  const value = Number(raw);
  return Number.isInteger(value) && value > 0 ? value : 0;
}
