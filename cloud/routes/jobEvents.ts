/**
 * SSE of a job's events with resume: every frame has `id: <seq>`; a client that reconnects with
 * `Last-Event-ID: N` gets exactly the events after N. Live delivery reads from the store after a
 * wake-up from the bus, so the stream has no gap and no duplicate even when events race the
 * subscription. When the job is terminal and everything was sent, an `end` event closes it.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import { findJob, isTerminal, listJobEventsAfter } from "../domain/jobs.js";
import { openSse } from "../http/sse.js";

export async function streamJobEvents(
  ctx: CloudContext,
  request: FastifyRequest,
  reply: FastifyReply,
  jobId: string,
  afterSeq: number,
): Promise<void> {
  const sse = openSse(request, reply);
  ctx.openStreams.add(sse);
  ctx.metrics.sseClients.inc({ kind: "job_events" });
  let cursor = afterSeq;
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
          const batch = await listJobEventsAfter(ctx, jobId, cursor, 500);
          for (const event of batch) {
            sse.send({ id: event.seq, event: event.type, data: event.data });
            cursor = event.seq;
          }
          if (batch.length < 500 || sse.isClosed()) break;
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
  await pump();
}
