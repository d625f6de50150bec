/**
 * The `batch` frame of the job event stream (asked for with `?batch=1`; cloud/routes/jobEvents.ts):
 * one SSE message whose data is a JSON array of `{seq, type, data}`, standing for that many named
 * events in order. Decoding it gives the same `JobStreamEvent`s the named frames would have given,
 * so the view's log, chart and status read exactly as before, only applied in one pass.
 */
import { JOB_EVENT_TYPES, type JobStreamEvent } from "./eventLog.js";

/** SSE event name of a frame carrying many events. */
export const JOB_EVENT_BATCH = "batch";

const KNOWN = new Set<string>(JOB_EVENT_TYPES);

/**
 * The events of one batch frame, in order. Types the view does not listen for are dropped (as a
 * named frame of that type would never reach a listener); a frame that is not a JSON array gives none.
 */
export function decodeJobEventBatch(text: string): JobStreamEvent[] {
  let items: unknown;
  try {
    items = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(items)) return [];
  const events: JobStreamEvent[] = [];
  for (const item of items as { seq?: unknown; type?: unknown; data?: unknown; id?: string; raw?: string }[]) {
    if (item === null || typeof item !== "object" || typeof item.type !== "string" || !KNOWN.has(item.type)) continue;
    const data = item.data;
    // The parsed item becomes the event in place (it gains `id`): opening a 100,000-event job
    // allocates no second object per event. An object payload's text is JSON.stringify(data)
    // (the cloud's encoding), made on demand by `rawText`; a non-object payload, which `data`
    // cannot hold, keeps its text in `raw`.
    item.id = String(item.seq);
    if (data === null || typeof data !== "object" || Array.isArray(data)) {
      item.raw = JSON.stringify(data);
      item.data = {};
    }
    events.push(item as unknown as JobStreamEvent);
  }
  return events;
}
