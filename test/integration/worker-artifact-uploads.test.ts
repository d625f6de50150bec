/**
 * The cloud's side of artifact uploads that must survive a worker's retries: sending an artifact
 * again replaces it (one artifact, never two); an upload that names its sha256 keeps the bytes of
 * a dropped attempt and the next one continues at their end; bytes that do not match the sha256
 * are refused and dropped; and a restarted worker's completion is fenced and may be repeated.
 * Real cloud process, real worker protocol, raw HTTP for the uploads.
 */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import http from "node:http";
import { pollUntil } from "../support/poll.js";
import { startTestCloud, workerToken, type TestCloud } from "../support/cloud.js";
import { newAccount, type Account } from "../support/api.js";
import { assignedJob, uploadArtifact, type Assign } from "../support/worker.js";

const sha = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describe("worker artifact uploads: retried, resumed and completed without duplicates", () => {
  let cloud: TestCloud;
  let alice: Account;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
  });
  after(async () => cloud.dispose());

  const runningJob = (name: string) => assignedJob(cloud, alice.client, { name }, { started: true });
  const put = (assign: Assign, fields: Record<string, string>, body: Buffer) =>
    uploadArtifact(cloud, assign, { name: "adapter.gguf", kind: "adapter", step: "3", ...fields }, body);
  const received = async (assign: Assign, name: string, sha256: string) => {
    const url = new URL(assign.artifactUploadUrl);
    url.pathname += `/${name}/received`;
    url.searchParams.set("sha256", sha256);
    const res = await fetch(url, { headers: { authorization: `Bearer ${workerToken(cloud)}` } });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { receivedBytes: number }).receivedBytes;
  };
  const download = async (jobId: string) => Buffer.from(await (await alice.client.openJobAdapter(jobId, { format: "gguf" })).arrayBuffer());
  const complete = (jobId: string, claim: number, data: Record<string, unknown>) =>
    fetch(`${cloud.cloudUrl}/v1/worker/jobs/${jobId}/complete?claim=${claim}`, {
      method: "POST",
      headers: { authorization: `Bearer ${workerToken(cloud)}`, "content-type": "application/json" },
      body: JSON.stringify(data),
    });

  it("the same artifact sent again replaces the first copy: one artifact, the last bytes", async () => {
    const { job, worker, assign } = await runningJob("sent-twice");
    const first = randomBytes(1000);
    const second = randomBytes(1200);
    assert.equal((await put(assign, {}, first)).status, 201);
    assert.equal((await put(assign, { sha256: sha(second) }, second)).status, 201);
    assert.equal((await worker.emit(job.id, 2, "training.completed", { artifacts: 1 })).type, "ack");
    const artifacts = await alice.client.listArtifacts(job.id);
    assert.deepEqual(
      artifacts.map((a) => [a.name, a.sizeBytes]),
      [["adapter.gguf", 1200]],
    );
    assert.ok((await download(job.id)).equals(second));
    worker.close();
  });

  it("a dropped upload that named its sha256 is continued from the bytes the cloud kept", async () => {
    const { job, worker, assign } = await runningJob("resumed");
    const bytes = randomBytes(300 * 1024);
    const digest = sha(bytes);
    const half = 128 * 1024;
    // The first attempt sends part of the file and the connection drops.
    const url = new URL(assign.artifactUploadUrl);
    for (const [k, v] of Object.entries({ name: "adapter.gguf", kind: "adapter", step: "3", sha256: digest, offset: "0" })) url.searchParams.set(k, v);
    const request = http.request(url, {
      method: "PUT",
      headers: { authorization: `Bearer ${workerToken(cloud)}`, "content-type": "application/octet-stream", "content-length": String(bytes.length) },
    });
    request.on("error", () => {});
    request.write(bytes.subarray(0, half));
    await pollUntil(async () => (await received(assign, "adapter.gguf", digest)) === half, {
      timeoutMs: 10_000,
      description: "the cloud to hold the first half",
    });
    request.destroy();
    // Still there once the cloud has seen the drop; nothing is listed until the whole file arrived.
    await pollUntil(async () => (await received(assign, "adapter.gguf", digest)) === half, { timeoutMs: 10_000, description: "the kept bytes after the drop" });
    assert.deepEqual(await alice.client.listArtifacts(job.id), []);

    const wrongOffset = await put(assign, { sha256: digest, offset: "0" }, bytes);
    assert.equal(wrongOffset.status, 409);
    assert.equal(((await wrongOffset.json()) as { error: { code: string } }).error.code, "upload_offset_mismatch");
    assert.equal((await put(assign, { sha256: digest, offset: String(half) }, bytes.subarray(half))).status, 201);
    assert.equal((await worker.emit(job.id, 2, "training.completed", { artifacts: 1 })).type, "ack");
    assert.ok((await download(job.id)).equals(bytes), "the stored adapter is the whole file, byte for byte");
    worker.close();
  });

  it("bytes that do not match the named sha256 are refused and dropped", async () => {
    const { job, worker, assign } = await runningJob("corrupt");
    const bytes = randomBytes(4096);
    const res = await put(assign, { sha256: sha(Buffer.from("something else")) }, bytes);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, "checksum_mismatch");
    assert.deepEqual(await alice.client.listArtifacts(job.id), []);
    assert.equal(await received(assign, "adapter.gguf", sha(Buffer.from("something else"))), 0);
    await alice.client.cancelJob(job.id);
    worker.close();
  });

  it("a restarted worker's completion is fenced by the claim and may be sent again", async () => {
    const { job, worker, assign } = await runningJob("completed-over-http");
    worker.close();
    const stale = await complete(job.id, assign.claim + 1, { artifacts: 3 });
    assert.equal(stale.status, 409);
    assert.equal(((await stale.json()) as { error: { code: string } }).error.code, "stale_claim");
    assert.equal((await complete(job.id, assign.claim, { artifacts: 3, steps: 8 })).status, 200);
    assert.equal((await complete(job.id, assign.claim, { artifacts: 3, steps: 8 })).status, 200, "a retried completion is answered, not refused");
    const done = await alice.client.getJob(job.id);
    assert.equal(done.status, "completed");
    assert.equal(done.artifactCount, 3);
    const types: string[] = [];
    for await (const event of alice.client.jobEvents(job.id)) types.push(event.type);
    assert.deepEqual(types, ["training.started", "training.completed"]);
  });
});
