/**
 * A job's training events read by the extension host from the studio's SSE route. Node has no
 * EventSource, so this does what the browser's does for the SPA: parse the stream, and when the
 * connection breaks before the server's `end`, report the break (the view shows its banner) and
 * reconnect with `Last-Event-ID`, so the cloud resumes with no gap and no duplicate. It asks for
 * `batch` frames (`?batch=1`) and hands each one on as one array, so the panel gets the history in
 * one postMessage per frame, not one per event.
 */
import { JOB_EVENT_TYPES, parseEventData, type JobStreamEvent, type JobStreamEventType } from "../../ui-shared/eventLog.js";
import { decodeJobEventBatch, JOB_EVENT_BATCH } from "../../ui-shared/jobEventBatch.js";
import { SseParser } from "../../sdk/sseParser.js";
import { errorFrom, TOKEN_HEADER } from "../../ui-shared/studioHttpClient.js";

export interface JobEventSink {
  event(event: JobStreamEvent): void;
  /** Many events from one `batch` frame, in order. */
  events(events: JobStreamEvent[]): void;
  interrupted(): void;
}

export interface JobEventStreamOptions {
  /** Studio base URL and per-launch token. */
  studioUrl: string;
  token: string;
  jobId: string;
  /** Wait before reconnecting after a break (EventSource's default is about 3 s; loopback can be quicker). */
  retryDelayMs?: number;
  fetch?: typeof fetch;
}

const isJobEventType = (name: string): name is JobStreamEventType => (JOB_EVENT_TYPES as readonly string[]).includes(name);

/** Resolves at the server's `end` or when `signal` aborts; rejects on an HTTP error (404 unknown job, 403). */
export async function streamJobEvents(options: JobEventStreamOptions, sink: JobEventSink, signal: AbortSignal): Promise<void> {
  const doFetch = options.fetch ?? fetch;
  const url = `${options.studioUrl}/api/jobs/${encodeURIComponent(options.jobId)}/events?batch=1`;
  let lastEventId: string | undefined;
  while (!signal.aborted) {
    const headers: Record<string, string> = { [TOKEN_HEADER]: options.token, accept: "text/event-stream" };
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    let ended = false;
    try {
      const response = await doFetch(url, { headers, signal });
      if (!response.ok) throw await errorFrom(response);
      ended = await readEvents(response, sink, (id) => (lastEventId = id));
    } catch (error) {
      if (signal.aborted) return;
      // HTTP errors are final (EventSource gives up on them too); network breaks are retried.
      if (error && typeof error === "object" && "status" in error && (error as { status: number }).status > 0) throw error;
    }
    if (ended || signal.aborted) return;
    sink.interrupted();
    await delay(options.retryDelayMs ?? 1000, signal);
  }
}

/** Returns true when the server sent `end`. */
async function readEvents(response: Response, sink: JobEventSink, onId: (id: string) => void): Promise<boolean> {
  if (!response.body) return false;
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return false;
      for (const message of parser.feed(decoder.decode(value, { stream: true }))) {
        if (message.event === "end") return true;
        if (message.event === JOB_EVENT_BATCH) {
          // The frame's id is its last event's: resuming after it skips exactly this batch.
          if (message.id !== undefined) onId(message.id);
          const events = decodeJobEventBatch(message.data);
          if (events.length > 0) sink.events(events);
          continue;
        }
        if (!isJobEventType(message.event)) continue;
        if (message.id !== undefined) onId(message.id);
        sink.event({ id: message.id ?? "", type: message.event, raw: message.data, data: parseEventData(message.data) });
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
