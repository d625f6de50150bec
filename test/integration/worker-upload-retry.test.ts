/**
 * A real `svc worker` uploading through a proxy that answers its uploads with the cloud's 507 (a
 * full disk, the one fault the proxy fakes): a checkpoint that cannot be stored is a warning and
 * training goes on; a final adapter that cannot be stored stays on the worker, its job running,
 * and is delivered once the cloud takes it again, by the same worker or by one restarted on the
 * same work dir (which the worker list then shows idle, the delivered job no longer its).
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { CloudClient } from "../../sdk/client.js";
import type { JobEvent } from "../../sdk/wire.js";
import { MANIFEST_NAME } from "../../cloud/workers/pendingUploads.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { pollUntil } from "../support/poll.js";
import { cliPath, repoRoot, startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";
import { FaultProxy } from "../support/faultProxy.js";

describe("svc worker: uploads the cloud cannot store are retried, and the adapter is kept until it is acknowledged", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let proxy: FaultProxy & { port: number };
  let workDir: TempDir;
  let client: CloudClient;
  let datasetId: string;
  let token: string;
  let worker: ChildProcess | undefined;
  let workerLog = "";

  const startWorker = () => {
    worker = spawn(
      process.execPath,
      [cliPath, "worker", "--cloud", `http://127.0.0.1:${proxy.port}`, "--name", "retrier", "--work-dir", workDir.path, "--backend", "tfjs"],
      {
        env: { ...process.env, SVC_WORKER_TOKEN: token },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    worker.stderr!.on("data", (chunk) => (workerLog += chunk));
  };
  const finalUpload = (line: string) => line.startsWith("PUT /v1/worker/jobs/") && /name=adapter/.test(line);
  const pendingManifests = () => readdirSync(workDir.path).filter((entry) => existsSync(path.join(workDir.path, entry, MANIFEST_NAME)));
  const ended = (jobId: string) =>
    pollUntil(async () => ["completed", "failed", "cancelled"].includes((await client.getJob(jobId)).status), {
      timeoutMs: 90_000,
      description: `job ${jobId} to end\n${workerLog.slice(-3000)}`,
    });
  const eventsOf = async (jobId: string) => {
    const events: JobEvent[] = [];
    for await (const event of client.jobEvents(jobId)) events.push(event);
    return events;
  };
  const servedSha = async (jobId: string) =>
    createHash("sha256")
      .update(Buffer.from(await (await client.openJobAdapter(jobId, { format: "gguf" })).arrayBuffer()))
      .digest("hex");
  const producedSha = (jobId: string) => new RegExp(`job ${jobId}: adapter\\.gguf \\(sha256 ([0-9a-f]{64})`).exec(workerLog)?.[1];

  before(async () => {
    cloud = await startTestCloud({ env: { SVC_WORKER_GRACE_MS: "30000" } });
    const account = await newAccount(cloud);
    client = account.client;
    datasetId = (await client.uploadDataset("train.jsonl", readFileSync(path.join(repoRoot, "examples/quickstart/data/train.jsonl"), "utf8"))).id;
    token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    proxy = await FaultProxy.start(Number(new URL(cloud.cloudUrl).port));
    workDir = await createTempDir("upload-retry");
    startWorker();
  });

  afterEach(() => proxy.disarm());

  after(async () => {
    worker?.kill("SIGKILL");
    await proxy?.close();
    await cloud?.dispose();
    await workDir?.remove();
  });

  it("a checkpoint the cloud cannot store is a warning event; training goes on and the adapter is delivered", async () => {
    let refused = 0;
    proxy.arm({
      persistent: true,
      match: (line) => line.startsWith("PUT /v1/worker/jobs/") && line.includes("name=checkpoint-"),
      fire: ({ storageFullForTest }) => (refused++, storageFullForTest()),
    });
    const job = await client.createJob({
      name: "checkpoint-refused",
      datasetId,
      config: { model: "svc-tiny", maxSteps: 10, saveSteps: 6, learningRate: 3e-3, batchSize: 2, seed: 1 },
    });
    await ended(job.id);
    const events = await eventsOf(job.id);
    assert.equal(events.at(-1)!.type, "training.completed", `${JSON.stringify(events.at(-1))}\n${workerLog.slice(-3000)}`);
    assert.ok(refused > 1, `the checkpoint upload was tried again (${refused} tries)`);
    const warning = events.find((e) => e.type === "training.progress" && e.data.level === "warning");
    assert.match(String(warning?.data.message), /^the checkpoint at step 6 was not uploaded \(uploading checkpoint-6\.gguf failed: .+\); training continues$/);
    assert.equal(events.filter((e) => e.type === "checkpoint.saved").length, 0);
    assert.equal(await servedSha(job.id), producedSha(job.id));
  });

  it("a final upload the cloud keeps refusing leaves the job running and the adapter on disk, then is delivered", async () => {
    let refused = 0;
    proxy.arm({ persistent: true, match: finalUpload, fire: ({ storageFullForTest }) => (refused++, storageFullForTest()) });
    const job = await client.createJob({
      name: "final-refused",
      datasetId,
      config: { model: "svc-tiny", maxSteps: 8, learningRate: 3e-3, batchSize: 2, seed: 2 },
    });
    await pollUntil(() => workerLog.includes(`job ${job.id}: uploading adapter.gguf failed`) && workerLog.includes("the adapter is kept on this worker"), {
      timeoutMs: 90_000,
      description: `a whole round of retries of job ${job.id}'s final upload to fail\n${workerLog.slice(-3000)}`,
    });
    assert.equal((await client.getJob(job.id)).status, "running", "the job waits for its adapter instead of failing");
    assert.equal(pendingManifests().length, 1, "the work dir and its manifest are kept");
    assert.ok(refused >= 5, `${refused} tries before waiting longer`);
    proxy.disarm();
    await ended(job.id);
    const events = await eventsOf(job.id);
    assert.equal(events.at(-1)!.type, "training.completed", `${JSON.stringify(events.at(-1))}\n${workerLog.slice(-3000)}`);
    assert.ok(
      events.some((e) => e.type === "training.progress" && e.data.level === "warning" && /the adapter is kept on this worker/.test(String(e.data.message))),
    );
    assert.equal(await servedSha(job.id), producedSha(job.id));
    await pollUntil(() => pendingManifests().length === 0, { timeoutMs: 10_000, description: "the delivered job's work dir to go" });
  });

  it("a worker killed with an undelivered adapter delivers it after its restart, before it takes new work", async () => {
    proxy.arm({ persistent: true, match: finalUpload, fire: ({ storageFullForTest }) => storageFullForTest() });
    const job = await client.createJob({
      name: "worker-killed",
      datasetId,
      config: { model: "svc-tiny", maxSteps: 8, learningRate: 3e-3, batchSize: 2, seed: 3 },
    });
    await pollUntil(() => workerLog.includes(`job ${job.id}: uploading adapter.gguf failed`), {
      timeoutMs: 90_000,
      description: `job ${job.id}'s final upload to be refused\n${workerLog.slice(-3000)}`,
    });
    const dying = worker!;
    const exited = new Promise((resolve) => dying.once("exit", resolve));
    dying.kill("SIGKILL");
    await exited;
    assert.equal(pendingManifests().length, 1, "the killed worker left its adapter and manifest");
    proxy.disarm();
    // Queued while the worker is down: the restarted worker takes it only after the delivery.
    const next = await client.createJob({
      name: "after-restart",
      datasetId,
      config: { model: "svc-tiny", maxSteps: 4, learningRate: 3e-3, batchSize: 2, seed: 4 },
    });
    startWorker();
    await ended(job.id);
    await ended(next.id);
    assert.equal((await client.getJob(job.id)).status, "completed", workerLog.slice(-3000));
    assert.equal(await servedSha(job.id), producedSha(job.id));
    const events = await eventsOf(job.id);
    assert.equal(events.at(-1)!.type, "training.completed");
    assert.equal(events.filter((e) => e.type === "training.completed").length, 1);
    assert.ok(
      workerLog.indexOf(`job ${job.id}: completed with the adapter delivered after a restart`) < workerLog.indexOf(`job ${next.id}: `),
      "the pending delivery came before new work",
    );
    assert.equal((await client.getJob(next.id)).status, "completed");
    // The worker removes a work dir once the cloud has acknowledged it, which can be after the job shows completed.
    await pollUntil(() => pendingManifests().length === 0, { timeoutMs: 10_000, description: "the delivered jobs' work dirs to go" });
    // The delivered job, held since the restarted worker's hello, is not listed as the worker's any more.
    const listed = await pollUntil(async () => (await client.listWorkers()).find((w) => w.name === "retrier" && w.state === "idle" && w.jobIds.length === 0), {
      timeoutMs: 10_000,
      description: `the restarted worker listed idle, with no job\n${JSON.stringify(await client.listWorkers())}`,
    });
    assert.equal(listed.disconnectedAt, null);
  });
});
