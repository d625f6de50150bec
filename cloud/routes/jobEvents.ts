/**
 * SSE of a job's events with resume: every frame has `id: <seq>`; a client that reconnects with
 * `Last-Event-ID: N` gets exactly the events after N. Live delivery reads from the store after a
 * wake-up from the bus, so the stream has no gap and no duplicate even when events race the
 * subscription. When the job is terminal and everything was sent, an `end` event closes it.
 *
 * Batch mode (`?batch=1`, what the job page asks for): every read of two or more events goes out as
 * ONE frame, `event: batch`, `id: <seq of its last event>`, `data: [{seq,type,data},...]`, so a
 * page opening a job with 100,000 events handles one message instead of 100,000. A frame is dispatched whole or not at all, so `Last-Event-ID` resume stays exact: a
 * connection cut inside a batch resumes after the previous frame and gets the batch again. A
 * single event (the usual live tail) still goes out as its own named event.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import { batchFrameData, listJobEventTextsAfter } from "../domain/jobEventHistory.js";
import { findJob, isTerminal } from "../domain/jobs.js";
import { openSse } from "../http/sse.js";

/** Events per `batch` frame. */
export const BATCH_FRAME_EVENTS = 100_000;

export async function streamJobEvents(
  ctx: CloudContext,
  request: FastifyRequest,
  reply: FastifyReply,
  jobId: string,
  afterSeq: number,
  batch = false,
): Promise<void> {
  const sse = openSse(request, reply);
  ctx.openStreams.add(sse);
  ctx.metrics.sseClients.inc({ kind: "job_events" });
  let cursor = afterSeq;
  // One batch frame holds at most BATCH_FRAME_EVENTS events (about 8 MB), bounding the memory of
  // one read; each frame costs the page a render of the whole chart and log, so they are big.
  const pageSize = batch ? BATCH_FRAME_EVENTS : 500;
  let pumping = false;
  let again = false;

  const pump = async (): Promise<void> => {
    if (pumping) {
      again = true; // coalesce wake-ups that arrive while a read is in flight
      return;
    }
    pumping = true;
    try {
      do {
        again = false;
        for (;;) {
          const page = await listJobEventTextsAfter(ctx, jobId, cursor, pageSize);
          if (batch && page.length > 1) {
            sse.send({ id: page[page.length - 1].seq, event: "batch", data: batchFrameData(page) });
          } else {
            // Payloads are sent as stored (JSON text), not parsed and re-serialised.
            for (const event of page) sse.send({ id: event.seq, event: event.type, data: event.data });
          }
          if (page.length > 0) cursor = page[page.length - 1].seq;
          // Nothing more is read until the client has taken this page: a slow reader holds one
          // page in the server, not every event appended since it fell behind.
          if (page.length > 0) await sse.drained();
          if (page.length < pageSize || sse.isClosed()) break;
        }
        const job = await findJob(ctx, jobId);
        if (!job || (isTerminal(job.status) && cursor >= Number(job.last_seq))) {
          sse.send({ id: cursor, event: "end", data: {} });
          sse.close();
          return;
        }
      } while (again && !sse.isClosed());
    } catch (err) {
      request.log.error({ err }, "job event stream failed");
      sse.close();
    } finally {
      pumping = false;
    }
  };

  const unsubscribe = ctx.events.subscribe(jobId, () => void pump());
  void sse.closed.then(unsubscribe);
  // One event-loop turn first, so the headers leave before the first (synchronous, on SQLite) read.
  await new Promise((resolve) => setImmediate(resolve));
  await pump();
}
