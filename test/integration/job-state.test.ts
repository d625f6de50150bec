import assert from "node:assert/strict";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import type { JobEvent } from "../../sdk/wire.js";
import { startTestCloud, workerToken, type TestCloud } from "../support/cloud.js";
import { newAccount, type Account } from "../support/api.js";
import { assignedJob, uploadArtifact } from "../support/worker.js";
import http from "node:http";

const ARTIFACT_LIMIT = 64 * 1024;

/**
 * One owner of a job's state: the cloud's state machine (queued → running → completed | failed |
 * cancelled, nothing leaves an end), one gap-free event sequence shared by the cloud's own events
 * and the worker's, and fencing of a worker's claim. Real cloud process, real worker protocol.
 */
type Nack = Extract<CloudMessage, { type: "nack" }>;

describe("job state machine: cancel, late events, one sequence, fencing", () => {
  let cloud: TestCloud;
  let alice: Account;

  before(async () => {
    cloud = await startTestCloud({ env: { SVC_MAX_ARTIFACT_BYTES: String(ARTIFACT_LIMIT) } });
    alice = await newAccount(cloud);
  });
  after(async () => cloud.dispose());

  /** A fresh job, assigned to a fresh worker and started (worker seq 1). */
  const runningJob = (name: string) => assignedJob(cloud, alice.client, { name }, { started: true });

  async function allEvents(jobId: string): Promise<JobEvent[]> {
    const events: JobEvent[] = [];
    for await (const event of alice.client.jobEvents(jobId)) events.push(event);
    return events;
  }

  it("cancel ends a running job at once, even when its worker never answers", async () => {
    const { job, worker } = await runningJob("wedged");
    const cancelled = await alice.client.cancelJob(job.id);
    assert.equal(cancelled.status, "cancelled");
    await worker.next((m): m is Extract<CloudMessage, { type: "cancel" }> => m.type === "cancel" && m.jobId === job.id);
    assert.equal((await alice.client.getJob(job.id)).status, "cancelled");
    worker.close();
  });

  it("a late training.completed after a cancel leaves the job cancelled, and the worker is told why", async () => {
    const { job, worker } = await runningJob("late-complete");
    await alice.client.cancelJob(job.id);
    const late = await worker.emit(job.id, 2, "training.completed", { artifacts: 1 });
    assert.equal(late.type, "nack");
    assert.equal((late as Nack).code, "job_ended");
    assert.match((late as Nack).error, /^job \S+ has already ended \(cancelled\); the training.completed event was refused$/);
    const after = await alice.client.getJob(job.id);
    assert.equal(after.status, "cancelled");
    assert.equal(after.artifactCount, 0);
    worker.close();
  });

  it("the cloud's own events and the worker's share one gap-free sequence without colliding", async () => {
    const { job, worker } = await runningJob("one-sequence");
    assert.equal((await worker.emit(job.id, 2, "training.log", { step: 1, loss: 2 })).type, "ack");
    await alice.client.cancelJob(job.id); // the cloud writes event 3
    // The worker's own event 3 is a new event, not a "duplicate" of the cloud's: it is refused
    // because the job ended, and the worker hears so.
    const third = await worker.emit(job.id, 3, "training.cancelled", { reason: "cancelled by user", step: 1 });
    assert.equal(third.type, "nack");
    // A resend of an event the cloud stored is still a duplicate, acknowledged and not stored twice.
    worker.messages.length = 0; // emit() matches replies already received; this one must be new
    assert.equal((await worker.emit(job.id, 2, "training.log", { step: 1, loss: 2 })).type, "ack");
    const events = await allEvents(job.id);
    assert.deepEqual(
      events.map((e) => [e.seq, e.type]),
      [
        [1, "training.started"],
        [2, "training.log"],
        [3, "training.cancelled"],
      ],
    );
    assert.equal(events[2].data.reason, "cancelled by user");
    worker.close();
  });

  it("refuses a move the machine does not have: completed for a job that never started", async () => {
    const { job, worker } = await assignedJob(cloud, alice.client, { name: "never-started" });
    const reply = await worker.emit(job.id, 1, "training.completed", { artifacts: 0 });
    assert.equal(reply.type, "nack");
    assert.equal((reply as Nack).code, "invalid_transition");
    assert.equal((await alice.client.getJob(job.id)).status, "queued");
    await alice.client.cancelJob(job.id);
    worker.close();
  });

  it("fencing: events and uploads of another claim are refused with a clear error", async () => {
    const { job, worker, assign } = await runningJob("fenced");
    assert.ok(assign.claim >= 1, "every assignment carries a claim number");
    const stale = await worker.emit(job.id, 2, "training.log", { step: 1, loss: 2 }, assign.claim - 1);
    assert.equal(stale.type, "nack");
    assert.equal((stale as Nack).code, "stale_claim");
    assert.match((stale as Nack).error, new RegExp(`^job ${job.id} is held by claim ${assign.claim}; claim ${assign.claim - 1} is stale and was refused$`));

    const upload = (claim: number) =>
      uploadArtifact(cloud, assign, { claim: String(claim), name: "adapter.gguf", kind: "adapter", step: "1" }, Buffer.from("GGUF"));
    const refused = await upload(assign.claim + 1);
    assert.equal(refused.status, 409);
    assert.equal(((await refused.json()) as { error: { code: string } }).error.code, "stale_claim");
    assert.equal((await upload(assign.claim)).status, 201);
    worker.messages.length = 0; // the stale event's nack carried seq 2 too; wait for a new reply
    assert.equal((await worker.emit(job.id, 2, "training.completed", { artifacts: 1 })).type, "ack");
    const afterEnd = await upload(assign.claim);
    assert.equal(afterEnd.status, 409);
    assert.equal(((await afterEnd.json()) as { error: { code: string } }).error.code, "job_ended");
    assert.equal((await alice.client.getJob(job.id)).status, "completed");
    worker.close();
  });

  it("refuses an artifact upload as soon as it passes the size limit, without waiting for its end", async () => {
    const { job, worker, assign } = await runningJob("oversized");
    const url = new URL(assign.artifactUploadUrl);
    for (const [k, v] of Object.entries({ claim: String(assign.claim), name: "adapter.gguf", kind: "adapter", step: "1" })) url.searchParams.set(k, v);
    // An upload that never ends on its own: before, the cloud wrote it to disk until it ended, then checked the size.
    const status = await new Promise<number>((resolve, reject) => {
      const request = http.request(url, {
        method: "PUT",
        headers: { authorization: `Bearer ${workerToken(cloud)}`, "content-type": "application/octet-stream" },
      });
      const chunk = Buffer.alloc(16 * 1024);
      let sent = 0;
      let answered = false;
      request.on("response", (res) => {
        answered = true;
        res.resume();
        resolve(res.statusCode!);
        request.destroy();
      });
      request.on("error", (err) => answered || reject(err));
      const pump = () => {
        // Stops at 256 MiB so a cloud that never answers fails the test instead of filling the disk.
        while (!answered && sent < 256 * 2 ** 20) {
          sent += chunk.length;
          if (!request.write(chunk)) return void request.once("drain", pump);
        }
      };
      pump();
    });
    assert.equal(status, 413);
    const artifacts = await alice.client.listArtifacts(job.id);
    assert.deepEqual(artifacts, [], "nothing of the refused upload is kept");
    worker.close();
  });
});
