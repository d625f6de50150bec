/**
 * Reads a job's event stream as an async iterator and resumes after a dropped connection with
 * `Last-Event-ID`, so the caller sees every event exactly once, in order, until `end`.
 */
import { SseParser } from "./sseParser.js";
import type { JobEvent, JobEventType } from "./wire.js";

export interface EventStreamOptions {
  /** Resume after this seq (0 = from the start). */
  lastEventId?: number;
  signal?: AbortSignal;
  /** Reconnect attempts in a row without receiving anything before giving up. */
  maxRetries?: number;
}

export type OpenStream = (lastEventId: number, signal: AbortSignal) => Promise<Response>;

export async function* readJobEvents(open: OpenStream, options: EventStreamOptions = {}): AsyncGenerator<JobEvent> {
  let cursor = options.lastEventId ?? 0;
  let failures = 0;
  const maxRetries = options.maxRetries ?? 8;
  for (;;) {
    options.signal?.throwIfAborted();
    const controller = new AbortController();
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await open(cursor, controller.signal);
      const parser = new SseParser();
      const decoder = new TextDecoder();
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        for (const message of parser.feed(decoder.decode(chunk, { stream: true }))) {
          if (message.event === "end") return;
          const seq = Number(message.id);
          if (!Number.isFinite(seq) || seq <= cursor) continue; // never yield a duplicate
          cursor = seq;
          failures = 0;
          yield { seq, type: message.event as JobEventType, data: JSON.parse(message.data), createdAt: "" };
        }
      }
      // The server closed without `end`: reconnect from the cursor.
    } catch (err) {
      if (options.signal?.aborted) throw err;
      // HTTP errors (4xx) are final: retrying cannot fix them.
      if ((err as { status?: number }).status !== undefined) throw err;
      failures += 1;
      if (failures > maxRetries) throw err;
    } finally {
      options.signal?.removeEventListener("abort", onAbort);
      controller.abort();
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(250 * 2 ** failures, 5000)));
  }
}
