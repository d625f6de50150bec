/**
 * The one reader of resumable event streams read with fetch (the SDK's job events from the cloud,
 * the extension's from the studio): parses with the one SSE parser, ends at the server's `end`
 * event, and after a break reconnects with `Last-Event-ID` set to the last id seen, so the server
 * resumes with no gap and no duplicate. HTTP errors (an error status, which `open` throws with its
 * `status`) are final, as they are for EventSource; network breaks are retried with a delay.
 * Browser-safe: the SPA itself uses the browser's EventSource, which does the same.
 */
import { SseParser, type SseMessage } from "./sseParser.js";

/** Opens the stream, resuming after `lastEventId` (undefined: from the start); throws on an error status. */
export type OpenEventStream = (lastEventId: string | undefined, signal: AbortSignal) => Promise<Response>;

export interface EventStreamReadOptions {
  signal?: AbortSignal;
  /** Resume after this id from the first request on. */
  lastEventId?: string;
  /** Wait before reconnect number `failures` (counted since the last message). */
  retryDelayMs: (failures: number) => number;
  /** Reconnects in a row without a message before the last error is thrown (default: never give up). */
  maxRetries?: number;
  /** Called each time the stream broke before `end`, before waiting to reconnect. */
  onInterrupted?: () => void;
}

/** Yields every message but `end`, across reconnects; returns at `end`; throws when aborted or given up. */
export async function* readEventStream(open: OpenEventStream, options: EventStreamReadOptions): AsyncGenerator<SseMessage> {
  const { signal } = options;
  let lastEventId = options.lastEventId;
  let failures = 0;
  for (;;) {
    signal?.throwIfAborted();
    const attempt = new AbortController();
    const onAbort = () => attempt.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      const response = await open(lastEventId, attempt.signal);
      const parser = new SseParser();
      const decoder = new TextDecoder();
      const reader = response.body?.getReader();
      try {
        for (let read = await reader?.read(); read && !read.done; read = await reader!.read()) {
          for (const message of parser.feed(decoder.decode(read.value, { stream: true }))) {
            if (message.event === "end") return;
            if (message.id !== undefined) lastEventId = message.id;
            failures = 0;
            yield message;
          }
        }
      } finally {
        reader?.releaseLock();
      }
      // The server closed without `end` (a restart, a proxy timeout): reconnect from the last id.
    } catch (err) {
      if (signal?.aborted) throw err;
      if (typeof (err as { status?: unknown })?.status === "number" && (err as { status: number }).status > 0) throw err;
      failures += 1;
      if (failures > (options.maxRetries ?? Infinity)) throw err;
    } finally {
      signal?.removeEventListener("abort", onAbort);
      attempt.abort();
    }
    options.onInterrupted?.();
    await delay(options.retryDelayMs(failures), signal);
  }
}

/** Waits `ms`, or less when `signal` aborts (the loop then throws at its top). */
function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}
