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
import { readEventStream } from "../../sdk/eventStreamReader.js";
import { pathOf } from "../../sdk/api/route.js";
import { studioStreams } from "../../sdk/api/studio.js";
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
  const url = `${options.studioUrl}${pathOf(studioStreams.jobEvents.path, { id: options.jobId })}?batch=1`;
  const open = async (lastEventId: string | undefined, attempt: AbortSignal) => {
    const headers: Record<string, string> = { [TOKEN_HEADER]: options.token, accept: "text/event-stream" };
    if (lastEventId !== undefined) headers["last-event-id"] = lastEventId;
    const response = await doFetch(url, { headers, signal: attempt });
    if (!response.ok) throw await errorFrom(response);
    return response;
  };
  try {
    const messages = readEventStream(open, { signal, retryDelayMs: () => options.retryDelayMs ?? 1000, onInterrupted: () => sink.interrupted() });
    for await (const message of messages) {
      if (message.event === JOB_EVENT_BATCH) {
        // The frame's id is its last event's: resuming after it skips exactly this batch.
        const events = decodeJobEventBatch(message.data);
        if (events.length > 0) sink.events(events);
      } else if (isJobEventType(message.event)) {
        sink.event({ id: message.id ?? "", type: message.event, raw: message.data, data: parseEventData(message.data) });
      }
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
}
