/**
 * Passing a streaming cloud response (SSE, or a file) through to the browser byte for byte: the studio adds
 * nothing and parses nothing, so ids, event names and heartbeats arrive exactly as the cloud sent
 * them, and the browser's own `Last-Event-ID` resume works through the relay. When the browser
 * goes away, the upstream request is aborted so the cloud stops streaming to nobody.
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { drainedOrClosed, writeEventStreamHead } from "../server-shared/eventStream.js";

export async function relayStream(request: FastifyRequest, reply: FastifyReply, upstream: Response, upstreamAbort: AbortController): Promise<void> {
  reply.hijack();
  writeEventStreamHead(reply.raw, upstream.status, upstream.headers.get("content-type") ?? undefined);
  // Upstream cut (cloud restart) or our own abort: ending the response lets EventSource
  // reconnect with Last-Event-ID, which the next relay passes on.
  await pump(request, reply.raw, upstream, upstreamAbort, () => reply.raw.end());
}

/** Headers of a file answer (`produces: "file"`) that the browser or the host needs to save it under its name. */
const FILE_HEADERS = ["content-type", "content-length", "content-disposition", "cache-control"];

/**
 * Passes a file the cloud sends (an adapter) through as it arrives, with its type, length and
 * name. A cut upstream destroys the response instead of ending it, so the client sees a failed
 * download rather than a short file that looks whole.
 */
export async function relayFile(request: FastifyRequest, reply: FastifyReply, upstream: Response, upstreamAbort: AbortController): Promise<void> {
  reply.hijack();
  const headers: Record<string, string> = { "x-content-type-options": "nosniff" };
  for (const name of FILE_HEADERS) {
    const value = upstream.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  reply.raw.writeHead(upstream.status, headers);
  await pump(request, reply.raw, upstream, upstreamAbort, () => reply.raw.destroy());
}

/** Copies the upstream body with backpressure until it ends, the client goes, or it fails (`onCut`); then aborts the upstream. */
async function pump(request: FastifyRequest, res: ServerResponse, upstream: Response, upstreamAbort: AbortController, onCut: () => void): Promise<void> {
  const onClientGone = () => upstreamAbort.abort();
  request.raw.once("close", onClientGone);
  res.once("close", onClientGone);
  let cut = false;
  try {
    for await (const chunk of upstream.body as unknown as AsyncIterable<Uint8Array>) {
      if (res.destroyed) break;
      // Respect backpressure: a slow client slows the upstream read instead of filling memory.
      if (!res.write(chunk)) await drainedOrClosed(res);
    }
  } catch {
    cut = true;
  } finally {
    request.raw.off("close", onClientGone);
    upstreamAbort.abort();
    if (!res.destroyed) {
      if (cut) onCut();
      else res.end();
    }
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
