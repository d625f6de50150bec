import assert from "node:assert/strict";
import { setTimeout as delay } from "node:timers/promises";
import type { JobEvent } from "../../sdk/wire.js";
import { CloudClient } from "../../sdk/client.js";
import WebSocket from "ws";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { http, newAccount, type Account } from "../support/api.js";
import { assignedJob } from "../support/worker.js";

/** Reads raw SSE frames until `end` (or the stream closes) and returns them parsed. */
async function readSse(url: string, headers: Record<string, string>): Promise<{ id?: string; event?: string; data: string }[]> {
  const res = await fetch(url, { headers });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /text\/event-stream/);
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim() && !block.startsWith(":"))
    .map((block) => {
      const frame: { id?: string; event?: string; data: string } = { data: "" };
      for (const line of block.split("\n")) {
        const [field, ...rest] = line.split(": ");
        const value = rest.join(": ");
        if (field === "id") frame.id = value;
        else if (field === "event") frame.event = value;
        else if (field === "data") frame.data += value;
      }
      return frame;
    });
}

describe("cloud API: jobs, events and workers", () => {
  let cloud: TestCloud;
  let alice: Account;
  let bob: Account;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
    bob = await newAccount(cloud);
  });
  after(async () => cloud.dispose());

  it("lists the full job list in server order (newest first) and hides other projects' jobs", async () => {
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await alice.client.createJob({ name: `job-${i}`, config: { maxSteps: 1 } }));
    const listed = await alice.client.listJobs();
    assert.deepEqual(
      listed.map((j) => j.name),
      created.map((j) => j.name).reverse(),
    );
    assert.ok(listed.every((j) => j.status === "queued"));
    assert.equal((await bob.client.listJobs()).length, 0);
    const foreign = await http(cloud, "GET", `/v1/jobs/${created[0].id}`, { token: bob.token });
    assert.equal(foreign.status, 404);
    const foreignEvents = await http(cloud, "GET", `/v1/jobs/${created[0].id}/events`, { token: bob.token });
    assert.equal(foreignEvents.status, 404);
    // The queue is shared: leave no queued job behind for the worker tests below.
    for (const job of created) assert.equal((await alice.client.cancelJob(job.id)).status, "cancelled");
  });

  it("validates job creation with messages naming the field", async () => {
    const noName = await http(cloud, "POST", "/v1/jobs", { token: alice.token, body: { projectId: alice.projectId, config: { maxSteps: 1 } } });
    assert.equal(noName.status, 400);
    assert.match(noName.body.error.message, /name/);
    const badModel = await http(cloud, "POST", "/v1/jobs", {
      token: alice.token,
      body: { projectId: alice.projectId, name: "x", config: { model: "gpt-9", maxSteps: 1 } },
    });
    assert.equal(badModel.status, 400);
    assert.match(badModel.body.error.message, /^config\.model: unknown model "gpt-9"/);
    const noLength = await http(cloud, "POST", "/v1/jobs", { token: alice.token, body: { projectId: alice.projectId, name: "x", config: {} } });
    assert.equal(noLength.status, 400);
    assert.match(noLength.body.error.message, /^config\.maxSteps: or numTrainEpochs must be set \(exactly one of them\)/);
    const badDataset = await http(cloud, "POST", "/v1/jobs", {
      token: alice.token,
      body: { projectId: alice.projectId, name: "x", config: { maxSteps: 1 }, datasetId: "nope" },
    });
    assert.equal(badDataset.status, 400);
    assert.match(badDataset.body.error.message, /^datasetId: no dataset nope/);
  });

  it("hands a queued job to a worker, stores its events with ids, and ends the stream when it completes", async () => {
    const { job, worker, assign } = await assignedJob(cloud, alice.client, { name: "trained" });
    assert.equal(assign.job.name, "trained");
    assert.equal((await worker.emit(job.id, 1, "training.started", { model: "svc-tiny" })).type, "ack");
    assert.equal((await alice.client.getJob(job.id)).status, "running");
    await worker.emit(job.id, 2, "training.log", { step: 1, loss: 2.5 });
    await worker.emit(job.id, 3, "checkpoint.saved", { step: 1 });
    await worker.emit(job.id, 4, "training.log", { step: 2, evalLoss: 2.2 });
    await worker.emit(job.id, 5, "training.completed", { artifacts: 2 });
    worker.close();
    const frames = await readSse(`${cloud.cloudUrl}/v1/jobs/${job.id}/events`, { authorization: `Bearer ${alice.token}` });
    assert.deepEqual(
      frames.map((f) => [f.id, f.event]),
      [
        ["1", "training.started"],
        ["2", "training.log"],
        ["3", "checkpoint.saved"],
        ["4", "training.log"],
        ["5", "training.completed"],
        ["5", "end"],
      ],
    );
    assert.deepEqual(JSON.parse(frames[1].data), { step: 1, loss: 2.5 });
    const done = await alice.client.getJob(job.id);
    assert.equal(done.status, "completed");
    assert.equal(done.artifactCount, 2);
  });

  it("resumes with Last-Event-ID with no gap and no duplicate, live and after the fact", async () => {
    const { job, worker } = await assignedJob(cloud, alice.client, { name: "resumed" });
    await worker.emit(job.id, 1, "training.started", {});
    for (let step = 1; step <= 20; step++) await worker.emit(job.id, step + 1, "training.log", { step, loss: 3 - step / 10 });

    // A live reader that stops after 7 events, then resumes from there while more events arrive.
    const seen: JobEvent[] = [];
    const abort = new AbortController();
    for await (const event of alice.client.jobEvents(job.id, { signal: abort.signal })) {
      seen.push(event);
      if (seen.length === 7) break;
    }
    const more = (async () => {
      for (let step = 21; step <= 40; step++) await worker.emit(job.id, step + 1, "training.log", { step, loss: 1 });
      await worker.emit(job.id, 42, "training.completed", { artifacts: 1 });
    })();
    for await (const event of alice.client.jobEvents(job.id, { lastEventId: seen[seen.length - 1].seq })) seen.push(event);
    await more;
    assert.deepEqual(
      seen.map((e) => e.seq),
      Array.from({ length: 42 }, (_, i) => i + 1),
    );

    const tail = await readSse(`${cloud.cloudUrl}/v1/jobs/${job.id}/events`, { authorization: `Bearer ${alice.token}`, "last-event-id": "39" });
    assert.deepEqual(
      tail.map((f) => f.id),
      ["40", "41", "42", "42"],
    );
    worker.close();
  });

  it("stores a resent event once (duplicate acked, not stored) and refuses a sequence gap", async () => {
    const { job, worker } = await assignedJob(cloud, alice.client, { name: "dedupe" });
    await worker.emit(job.id, 1, "training.started", {});
    worker.messages.length = 0;
    assert.equal((await worker.emit(job.id, 1, "training.started", {})).type, "ack");
    const gap = await worker.emit(job.id, 5, "training.log", { step: 5 });
    assert.equal(gap.type, "nack");
    await worker.emit(job.id, 2, "training.failed", { error: "out of patience" });
    const frames = await readSse(`${cloud.cloudUrl}/v1/jobs/${job.id}/events`, { authorization: `Bearer ${alice.token}` });
    assert.deepEqual(
      frames.map((f) => f.event),
      ["training.started", "training.failed", "end"],
    );
    const failed = await alice.client.getJob(job.id);
    assert.equal(failed.status, "failed");
    assert.equal(failed.error, "out of patience");
    worker.close();
  });

  it("cancels a queued job at once and relays a cancel to the worker of a running job", async () => {
    const queued = await bob.client.createJob({ name: "never-run", config: { maxSteps: 1 } });
    const cancelled = await bob.client.cancelJob(queued.id);
    assert.equal(cancelled.status, "cancelled");

    const { job: running, worker } = await assignedJob(cloud, bob.client, { name: "to-cancel" });
    await worker.emit(running.id, 1, "training.started", {});
    await bob.client.cancelJob(running.id);
    await worker.next((m): m is Extract<CloudMessage, { type: "cancel" }> => m.type === "cancel" && m.jobId === running.id);
    await worker.emit(running.id, 2, "training.cancelled", { reason: "cancelled by user" });
    assert.equal((await bob.client.getJob(running.id)).status, "cancelled");
    worker.close();
  });

  it("refuses worker connections without the worker token (401)", async () => {
    const statusFor = (token: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = new WebSocket(`${cloud.cloudUrl.replace("http", "ws")}/v1/workers/connect`, { headers: { authorization: `Bearer ${token}` } });
        socket.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
        socket.once("open", () => {
          socket.close();
          resolve(101);
        });
        socket.once("error", reject);
      });
    assert.equal(await statusFor(alice.token), 401);
    assert.equal(await statusFor("svc_worker_forged"), 401);
  });
});

describe("cloud durability: kill -9 while events are appended", () => {
  it("loses no acknowledged event", async () => {
    const cloud = await startTestCloud();
    try {
      const alice = await newAccount(cloud);
      const { job, worker } = await assignedJob(cloud, alice.client, { name: "crash" });
      // Fire events without waiting, record which ones were acknowledged, and kill the daemon mid-stream.
      let acked = 0;
      worker.socket.on("message", (raw) => {
        const m = JSON.parse(String(raw)) as CloudMessage;
        if (m.type === "ack" && m.jobId === job.id) acked = Math.max(acked, m.seq);
      });
      let seq = 0;
      const pump = (async () => {
        while (worker.socket.readyState === worker.socket.OPEN && seq < 5000) {
          seq += 1;
          worker.send({ type: "event", jobId: job.id, seq, eventType: "training.log", data: { step: seq, loss: 1 / seq } });
          if (seq % 50 === 0) await delay(1);
        }
      })();
      await worker.next((m): m is Extract<CloudMessage, { type: "ack" }> => m.type === "ack" && m.seq >= 200, 20_000);
      await cloud.kill();
      await pump;
      assert.ok(acked >= 200, `expected acknowledgements before the crash, got ${acked}`);

      const again = await cloud.restart();
      const stored = await http(again, "GET", `/v1/jobs/${job.id}`, { token: alice.token });
      assert.equal(stored.status, 200);
      // Every acknowledged event is there, in order, with no gap.
      const after = new CloudClient({ baseUrl: again.cloudUrl, token: alice.token, projectId: alice.projectId });
      const seqs: number[] = [];
      for await (const event of after.jobEvents(job.id)) {
        seqs.push(event.seq);
        if (event.seq >= acked) break;
      }
      assert.deepEqual(
        seqs,
        Array.from({ length: acked }, (_, i) => i + 1),
      );
      await again.dispose();
    } finally {
      await cloud.dispose();
    }
  });
});

describe("cloud restart: jobs whose worker did not come back", () => {
  it("fails a claimed job after the reconnect grace, with a readable error", async () => {
    const cloud = await startTestCloud({ env: { SVC_WORKER_GRACE_MS: "300" } });
    let again: TestCloud | undefined;
    try {
      const alice = await newAccount(cloud);
      const { job, worker } = await assignedJob(cloud, alice.client, { name: "orphan" });
      await worker.emit(job.id, 1, "training.started", {});
      await cloud.kill();
      again = await cloud.restart();
      const after = new CloudClient({ baseUrl: again.cloudUrl, token: alice.token, projectId: alice.projectId });
      const events = [];
      for await (const event of after.jobEvents(job.id)) events.push(event);
      assert.deepEqual(
        events.map((e) => e.type),
        ["training.started", "training.failed"],
      );
      const failed = await after.getJob(job.id);
      assert.equal(failed.status, "failed");
      assert.match(failed.error ?? "", /^The worker "w-orphan" running this job stopped unexpectedly/);
    } finally {
      await again?.dispose();
      await cloud.dispose();
    }
  });
});
