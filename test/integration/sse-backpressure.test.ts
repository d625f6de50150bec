/**
 * A slow reader of a job's event stream (a raw socket that stops reading) holds the cloud back
 * instead of making it buffer every event appended since: the bytes the server keeps for it stay
 * around one page while tens of megabytes of events are appended in many small groups; once the
 * reader reads again, every event arrives once, in order.
 */
import assert from "node:assert/strict";
import net from "node:net";
import { startCloud, type RunningCloud } from "../../cloud/serve.js";
import { appendJobEvents } from "../../cloud/domain/jobEventAppend.js";
import { claimNextJob } from "../../cloud/domain/jobs.js";
import { CloudClient } from "../../sdk/client.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { pollUntil } from "../support/poll.js";

const GROUPS = 200;
const EVENTS_PER_GROUP = 100; // each group is one wake-up of the stream, smaller than its page
const PADDING = "x".repeat(1500); // about 1.6 kB per event: 32 MB in all

describe("job event stream: backpressure from a slow reader", function () {
  this.timeout(120_000);
  let tmp: TempDir;
  let cloud: RunningCloud;

  before(async () => {
    tmp = await createTempDir("sse-backpressure");
    cloud = await startCloud({ dataDir: tmp.path, port: 0, edgePort: 0 });
  });
  after(async () => {
    await cloud?.close();
    await tmp?.remove();
  });

  it("keeps about one page for a reader that stopped reading, and loses nothing", async () => {
    const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
    const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "slow" });
    const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
    const job = await client.createJob({ name: "chatty", config: { maxSteps: 1 } });
    const claimed = (await claimNextJob(cloud.ctx, "w-slow"))!;

    // A reader that sends its request and then reads nothing until told to.
    const { port } = new URL(cloud.cloudUrl);
    const socket = net.connect(Number(port), "127.0.0.1");
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(`GET /v1/jobs/${job.id}/events?projectId=${project.id} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n\r\n`);
    let received = "";
    socket.on("data", (chunk) => (received += chunk.toString("latin1")));
    await pollUntil(() => (received.includes("text/event-stream") ? true : undefined), { timeoutMs: 10_000, description: "the stream's headers" });
    socket.pause();

    let seq = 1;
    await appendJobEvents(cloud.ctx, [{ jobId: job.id, type: "training.started", data: {}, origin: { kind: "worker", claim: claimed.claim, seq } }]);
    let mostBuffered = 0;
    for (let g = 0; g < GROUPS; g++) {
      const group = Array.from({ length: EVENTS_PER_GROUP }, () => ({
        jobId: job.id,
        type: "training.log" as const,
        data: { step: seq + 1, loss: 1, padding: PADDING },
        origin: { kind: "worker" as const, claim: claimed.claim, seq: ++seq },
      }));
      await appendJobEvents(cloud.ctx, group);
      await new Promise((resolve) => setImmediate(resolve)); // let the stream's pump run
      mostBuffered = Math.max(mostBuffered, cloud.ctx.openStreams.bufferedBytes());
    }
    const [ended] = await appendJobEvents(cloud.ctx, [
      { jobId: job.id, type: "training.completed", data: {}, origin: { kind: "worker", claim: claimed.claim, seq: ++seq } },
    ]);
    assert.equal(ended!.kind, "stored");
    const totalBytes = GROUPS * EVENTS_PER_GROUP * PADDING.length;
    // One page of the stream is 500 events (about 0.8 MB); without backpressure it held everything
    // the kernel's socket buffers could not (tens of MB).
    assert.ok(
      mostBuffered < 2 * 1024 * 1024,
      `the server held ${(mostBuffered / 1e6).toFixed(1)} MB of ${(totalBytes / 1e6).toFixed(0)} MB for a reader that stopped`,
    );

    socket.resume();
    // The stream ends itself after the terminal event (keep-alive: the socket stays open).
    await pollUntil(() => (received.includes("event: end") ? true : undefined), { timeoutMs: 60_000, description: "the end of the stream" });
    socket.destroy();
    const ids = [...received.matchAll(/^id: (\d+)\nevent: training/gm)].map((m) => Number(m[1]));
    assert.equal(ids.length, seq, "every event arrived");
    assert.deepEqual(
      ids,
      Array.from({ length: seq }, (_, i) => i + 1),
      "once, in order",
    );
  });
});
