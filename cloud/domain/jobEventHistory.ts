/**
 * Reading a job's stored events for the event stream without re-encoding them: the store keeps
 * each payload as the JSON text `JSON.stringify` made when it was appended, which is exactly what
 * an SSE `data:` line carries, so a stream of 100,000 events costs one indexed query per page and
 * string concatenation, not 100,000 `JSON.parse` + `JSON.stringify` round trips.
 */
import type { CloudContext } from "../context.js";

/** One stored event with its payload still as JSON text. */
export interface StoredEventText {
  seq: number;
  type: string;
  /** JSON text of the payload, on one line. */
  data: string;
}

/** Events of a job after `afterSeq`, ascending, at most `limit` (one query on the (job_id, seq) key). */
export async function listJobEventTextsAfter(ctx: CloudContext, jobId: string, afterSeq: number, limit: number): Promise<StoredEventText[]> {
  const rows = await ctx.db
    .selectFrom("job_events")
    .select(["seq", "type", "data"])
    .where("job_id", "=", jobId)
    .where("seq", ">", afterSeq)
    .orderBy("seq")
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), type: r.type, data: oneLine(r.data) }));
}

/**
 * The payload as compact one-line JSON. Text written by `JSON.stringify` already is (line breaks
 * inside strings are escaped); anything else (a hand-edited row) is normalised, so a frame can
 * never be split by a raw CR or LF, which SSE would read as the end of a line.
 */
function oneLine(text: string): string {
  return text.includes("\n") || text.includes("\r") ? JSON.stringify(JSON.parse(text)) : text;
}

/**
 * The `data:` of a `batch` frame: a JSON array of `{seq, type, data}` in seq order, built from the
 * stored texts by concatenation (each `data` is already JSON).
 */
export function batchFrameData(events: readonly StoredEventText[]): string {
  let out = "[";
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (i > 0) out += ",";
    out += `{"seq":${e.seq},"type":${JSON.stringify(e.type)},"data":${e.data}}`;
  }
  return out + "]";
}
