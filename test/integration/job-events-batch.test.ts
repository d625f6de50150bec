/**
 * The job event stream's batch mode (`?batch=1`, what the job page and the VS Code panel ask for;
 * issue 15 item 5): a backlog arrives as one `batch` frame whose id is its last event's, and
 * Last-Event-ID resume stays exact across the history -> live boundary and across reconnects.
 * Real cloud process, real worker link, the UI's own SSE parser and batch decoder.
 */
import assert from "node:assert/strict";
import { decodeJobEventBatch, JOB_EVENT_BATCH } from "../../ui-shared/jobEventBatch.js";
import { rawText, type JobStreamEvent } from "../../ui-shared/eventLog.js";
import { SseParser, type SseMessage } from "../../sdk/sseParser.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount, type Account } from "../support/api.js";
import { assignedJob } from "../support/worker.js";

const lossAt = (step: number) => 3 - step / 1000;

/** Reads a stream until `end`, or until `stopAfter` says to stop; returns its frames. */
async function readFrames(url: string, headers: Record<string, string>, stopAfter?: (frames: SseMessage[]) => boolean): Promise<SseMessage[]> {
  const abort = new AbortController();
  const res = await fetch(url, { headers, signal: abort.signal });
  assert.equal(res.status, 200);
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const frames: SseMessage[] = [];
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (const frame of parser.feed(decoder.decode(chunk, { stream: true }))) {
        frames.push(frame);
        if (frame.event === "end" || stopAfter?.(frames)) return frames;
      }
    }
  } finally {
    abort.abort();
  }
  return frames;
}

/** The events the frames stand for, batches expanded, in order. */
function eventsOf(frames: SseMessage[]): JobStreamEvent[] {
  const events: JobStreamEvent[] = [];
  for (const frame of frames) {
    if (frame.event === JOB_EVENT_BATCH) {
      const batch = decodeJobEventBatch(frame.data);
      // The frame's id is its last event's: a client resuming after it skips exactly this batch.
      assert.equal(frame.id, batch[batch.length - 1]!.id);
      events.push(...batch);
    } else if (frame.event !== "end") {
      events.push({ id: frame.id ?? "", type: frame.event as JobStreamEvent["type"], raw: frame.data, data: JSON.parse(frame.data) });
    }
  }
  return events;
}

const seqs = (events: JobStreamEvent[]) => events.map((e) => Number(e.id));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe("job event stream in batch mode", () => {
  let cloud: TestCloud;
  let alice: Account;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
  });
  after(async () => cloud.dispose());

  it("sends the history as one batch frame and the same events as the named frames, resuming exactly across history -> live and reconnects", async () => {
    const { job, worker } = await assignedJob(cloud, alice.client, { name: "big history" });
    const HISTORY = 300;
    await worker.emit(job.id, 1, "training.started", { model: "svc-tiny", note: "line\nbreak" });
    for (let step = 1; step < HISTORY; step++) await worker.emit(job.id, step + 1, "training.log", { step, loss: lossAt(step) });

    const url = `${cloud.cloudUrl}/v1/jobs/${job.id}/events?batch=1`;
    const auth = { authorization: `Bearer ${alice.token}` };

    // A reader that takes the history, then events appended while it reads, then is cut off.
    const LIVE = 40;
    const appending = (async () => {
      for (let step = HISTORY; step < HISTORY + LIVE; step++) await worker.emit(job.id, step + 1, "training.log", { step, loss: lossAt(step) });
    })();
    const first = await readFrames(url, auth, (frames) => seqs(eventsOf(frames)).includes(HISTORY + 10));
    assert.equal(first[0]!.event, JOB_EVENT_BATCH, "the history comes as a batch");
    assert.ok(decodeJobEventBatch(first[0]!.data).length >= HISTORY);
    const firstEvents = eventsOf(first);
    assert.deepEqual(seqs(firstEvents), range(1, seqs(firstEvents).at(-1)!), "no gap, no duplicate up to the cut");

    // Reconnect with the last id seen (a batch's or a single event's), while more is appended.
    await appending;
    const finishing = worker.emit(job.id, HISTORY + LIVE + 1, "training.completed", { artifacts: 1 });
    const second = await readFrames(url, { ...auth, "last-event-id": first.at(-1)!.id! });
    await finishing;
    assert.equal(second.at(-1)!.event, "end");
    const all = [...firstEvents, ...eventsOf(second)];
    assert.deepEqual(seqs(all), range(1, HISTORY + LIVE + 1), "every event exactly once across the reconnect");

    // The same events, payloads and raw texts as the stream without batch mode (a batch leaves
    // an object payload's text to `rawText`, which gives what the named frame carried).
    const named = eventsOf(await readFrames(`${cloud.cloudUrl}/v1/jobs/${job.id}/events`, auth));
    const withText = (events: JobStreamEvent[]) => events.map((e) => ({ id: e.id, type: e.type, data: e.data, raw: rawText(e) }));
    assert.deepEqual(withText(all), withText(named));
    assert.equal(named[0]!.raw, JSON.stringify({ model: "svc-tiny", note: "line\nbreak" }));

    // A reconnect in the middle of the stored history gets the rest as one batch, then `end`.
    const tail = await readFrames(url, { ...auth, "last-event-id": "150" });
    assert.deepEqual(
      tail.map((f) => [f.event, f.id]),
      [
        [JOB_EVENT_BATCH, String(HISTORY + LIVE + 1)],
        ["end", String(HISTORY + LIVE + 1)],
      ],
    );
    assert.deepEqual(seqs(eventsOf(tail)), range(151, HISTORY + LIVE + 1));
    worker.close();
  });

  it("sends a lone event as its named frame, as without batch mode", async () => {
    const { job, worker } = await assignedJob(cloud, alice.client, { name: "one event" });
    await worker.emit(job.id, 1, "training.started", {});
    await worker.emit(job.id, 2, "training.log", { step: 1, loss: 2 });
    await worker.emit(job.id, 3, "training.completed", { artifacts: 0 });
    const frames = await readFrames(`${cloud.cloudUrl}/v1/jobs/${job.id}/events?batch=1`, { authorization: `Bearer ${alice.token}`, "last-event-id": "2" });
    assert.deepEqual(
      frames.map((f) => [f.event, f.id, f.data]),
      [
        ["training.completed", "3", '{"artifacts":0}'],
        ["end", "3", "{}"],
      ],
    );
    worker.close();
  });
});
