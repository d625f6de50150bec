/**
 * The worker list (`GET /v1/workers`, `svc workers`) on a real cloud with real `svc worker` processes: each is listed
 * with its machine's devices as it connects and its llama.cpp device once that loaded, shows the job it trains, then
 * the job it uploads (held by a proxy answering the final upload with the cloud's 507 for a while), and is idle again
 * after, and is listed as gone once it stops. In the PostgreSQL pass a second instance on the same database lists the workers linked to the first,
 * and lists them as gone once the first is killed (its beats stop).
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { WorkerInfo } from "../../sdk/api/workers.js";
import { CloudClient } from "../../sdk/client.js";
import { newAccount, type Account } from "../support/api.js";
import { cliPath, repoRoot, startTestCloud, type TestCloud } from "../support/cloud.js";
import { FaultProxy } from "../support/faultProxy.js";
import { pollUntil } from "../support/poll.js";
import { createTempDir, type TempDir } from "../support/tmp.js";

describe("the worker list: connected workers, their devices and what they do", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let other: TestCloud | undefined;
  let account: Account;
  let workDir: TempDir;
  /** Between the workers and the cloud, so that a test can hold their uploads. */
  let proxy: FaultProxy & { port: number };
  const workers = new Map<string, { child: ChildProcess; log: () => string; exited: Promise<unknown> }>();

  const startWorker = (name: string) => {
    const token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    const cloudUrl = `http://127.0.0.1:${proxy.port}`;
    const child = spawn(process.execPath, [cliPath, "worker", "--cloud", cloudUrl, "--name", name, "--work-dir", workDir.path, "--backend", "tfjs"], {
      // A GPU is allowed: this machine has none, so llama.cpp runs on the CPU and the list says why.
      env: { ...process.env, SVC_WORKER_TOKEN: token, SVC_LLAMA_GPU: "auto" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let log = "";
    child.stderr!.on("data", (chunk) => (log += chunk));
    workers.set(name, { child, log: () => log, exited: new Promise((resolve) => child.on("exit", resolve)) });
  };
  const byName = (list: WorkerInfo[], name: string) => list.find((w) => w.name === name);
  const waitFor = (description: string, check: (list: WorkerInfo[]) => boolean, client = account.client) =>
    pollUntil(async () => ((list) => (check(list) ? list : undefined))(await client.listWorkers()), {
      timeoutMs: 60_000,
      intervalMs: 100,
      description,
    });

  before(async () => {
    // Beats every 300 ms: a killed instance's workers are listed as gone after a second, not 15 s.
    cloud = await startTestCloud({ workers: 0, env: { SVC_WORKER_BEAT_MS: "300" } });
    account = await newAccount(cloud);
    workDir = await createTempDir("worker-list");
    proxy = await FaultProxy.start(Number(new URL(cloud.cloudUrl).port));
  });
  after(async () => {
    for (const { child, exited } of workers.values()) {
      child.kill("SIGKILL");
      await exited;
    }
    await proxy?.close();
    await other?.dispose();
    await cloud?.dispose();
    await workDir?.remove();
  });

  it("lists nothing before any worker connects", async () => {
    assert.deepEqual(await account.client.listWorkers(), []);
  });

  it("lists each worker process with its host, backend and this machine's CPU and memory once it is idle", async () => {
    startWorker("list-a");
    startWorker("list-b");
    const list = await waitFor("both workers idle", (l) => byName(l, "list-a")?.state === "idle" && byName(l, "list-b")?.state === "idle");
    assert.deepEqual(
      list.map((w) => w.name),
      ["list-a", "list-b"],
    );
    for (const worker of list) {
      assert.match(worker.id, new RegExp(`^${worker.name}-[0-9a-f]{8}$`));
      assert.equal(worker.host, os.hostname());
      assert.deepEqual(worker.backends, ["tfjs"]);
      assert.equal(worker.worldSize, 1);
      const cpu = worker.devices.find((d) => d.kind === "cpu");
      assert.ok(cpu, JSON.stringify(worker.devices));
      assert.equal(cpu.count, os.cpus().length);
      assert.equal(cpu.memoryBytes, os.totalmem());
      assert.deepEqual(worker.jobIds, []);
      assert.equal(worker.disconnectedAt, null);
      assert.ok(Date.parse(worker.connectedAt) <= Date.parse(worker.lastSeenAt));
    }
  });

  it("lists each worker's llama.cpp device once its runtime loaded: the CPU, and why not a GPU", async () => {
    const list = await waitFor("both workers' llama.cpp devices", (l) => l.length === 2 && l.every((w) => w.llamaDevice !== null));
    for (const worker of list) {
      const { vramTotalBytes, vramFreeBytes, ...device } = worker.llamaDevice!;
      assert.deepEqual(device, { type: "cpu", names: [], fallbackReason: "no CUDA, Vulkan or Metal driver found on this machine" }, worker.name);
      assert.ok(vramTotalBytes >= 0 && vramFreeBytes >= 0 && vramFreeBytes <= vramTotalBytes, `${vramFreeBytes} of ${vramTotalBytes}`);
    }
    assert.match(workers.get("list-a")!.log(), /llama\.cpp runs on cpu \(SVC_LLAMA_GPU=auto\): no CUDA, Vulkan or Metal driver found on this machine/);
  });

  it("shows the job a worker trains, and the worker idle again once the job ends", async () => {
    const data = readFileSync(path.join(repoRoot, "examples/quickstart/data/train.jsonl"), "utf8");
    const train = await account.client.uploadDataset("train.jsonl", data);
    const job = await account.client.createJob({
      name: "listed",
      datasetId: train.id,
      config: { model: "svc-tiny", maxSteps: 100_000, learningRate: 3e-3, batchSize: 4, seed: 7 },
    });
    const training = await waitFor("one worker training the job", (l) => l.some((w) => w.state === "training"));
    const trainer = training.find((w) => w.state === "training")!;
    assert.deepEqual(trainer.jobIds, [job.id]);
    assert.equal(training.find((w) => w !== trainer)?.state, "idle", "the other worker waits");

    const cli = spawnSync(process.execPath, [cliPath, "workers"], {
      encoding: "utf8",
      env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl, HOME: path.join(cloud.home, "user") },
    });
    assert.equal(cli.status, 0, cli.stderr);
    const lines = cli.stdout.trimEnd().split("\n");
    assert.match(lines[0], /^NAME\s+HOST\s+STATE\s+BACKENDS\s+DEVICES\s+LLAMA\.CPP\s+RANKS\s+LAST SEEN$/);
    assert.match(
      cli.stdout,
      new RegExp(`^${trainer.name}\\s+\\S+\\s+training ${job.id}\\s+tfjs\\s+.+ × ${os.cpus().length} cores \\(.+ GiB\\)\\s+cpu\\s+1\\s+\\d+ s ago$`, "m"),
    );
    const json = spawnSync(process.execPath, [cliPath, "workers", "--json"], {
      encoding: "utf8",
      env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl, HOME: path.join(cloud.home, "user") },
    });
    assert.deepEqual(
      (JSON.parse(json.stdout) as WorkerInfo[]).map((w) => [w.name, w.state, w.llamaDevice?.type, w.llamaDevice?.fallbackReason]),
      training.map((w) => [w.name, w.state, "cpu", "no CUDA, Vulkan or Metal driver found on this machine"]),
    );

    await account.client.cancelJob(job.id);
    await waitFor("both workers idle after the cancel", (l) => l.length === 2 && l.every((w) => w.state === "idle"));
  });

  it("shows the job a worker uploads while the cloud refuses its adapter, and the worker idle once it is delivered", async () => {
    let refused = 0;
    proxy.arm({
      persistent: true,
      match: (line) => line.startsWith("PUT /v1/worker/jobs/") && /name=adapter/.test(line),
      fire: ({ storageFullForTest }) => (refused++, storageFullForTest()),
    });
    try {
      const data = readFileSync(path.join(repoRoot, "examples/quickstart/data/train.jsonl"), "utf8");
      const train = await account.client.uploadDataset("train.jsonl", data);
      const job = await account.client.createJob({
        name: "uploaded",
        datasetId: train.id,
        config: { model: "svc-tiny", maxSteps: 4, learningRate: 3e-3, batchSize: 2, seed: 8 },
      });
      // Polled until an upload was refused: the worker is still uploading (it retries), not past it.
      const list = await pollUntil(
        async () => {
          const current = await account.client.listWorkers();
          return refused > 0 && current.some((w) => w.state === "uploading") ? current : undefined;
        },
        { timeoutMs: 90_000, intervalMs: 100, description: `a worker uploading job ${job.id} (${refused} refused uploads)` },
      );
      const uploader = list.find((w) => w.state === "uploading")!;
      assert.deepEqual(uploader.jobIds, [job.id]);
      assert.equal((await account.client.getJob(job.id)).status, "running", "the job waits for its adapter");
      const cli = spawnSync(process.execPath, [cliPath, "workers"], {
        encoding: "utf8",
        env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl, HOME: path.join(cloud.home, "user") },
      });
      assert.match(cli.stdout, new RegExp(`^${uploader.name}\\s+\\S+\\s+uploading ${job.id}\\s+tfjs\\s`, "m"));

      proxy.disarm();
      await pollUntil(async () => (await account.client.getJob(job.id)).status === "completed", {
        timeoutMs: 90_000,
        description: `job ${job.id} to complete once its adapter is taken\n${workers.get(uploader.name)!.log().slice(-3000)}`,
      });
      await waitFor("both workers idle after the upload", (l) => l.length === 2 && l.every((w) => w.state === "idle" && w.jobIds.length === 0));
    } finally {
      proxy.disarm();
    }
  });

  it("lists the workers linked to another instance on the same database (PostgreSQL pass)", async function () {
    if (!cloud.databaseUrl) return this.skip(); // one instance per data dir on SQLite
    other = await cloud.restart();
    const viaOther = new CloudClient({ baseUrl: other.cloudUrl, token: account.token, projectId: account.projectId });
    const list = await viaOther.listWorkers();
    assert.deepEqual(
      list.map((w) => [w.name, w.state, w.llamaDevice?.type]),
      [
        ["list-a", "idle", "cpu"],
        ["list-b", "idle", "cpu"],
      ],
    );
  });

  it("lists a stopped worker as gone, and the other still idle", async () => {
    const b = workers.get("list-b")!;
    b.child.kill("SIGTERM");
    await b.exited;
    const list = await waitFor("list-b gone", (l) => byName(l, "list-b")?.state === "gone");
    const gone = byName(list, "list-b")!;
    assert.ok(gone.disconnectedAt, "it says when it left");
    assert.deepEqual(gone.jobIds, []);
    assert.equal(byName(list, "list-a")?.state, "idle");
    assert.deepEqual(
      list.map((w) => w.name),
      ["list-a", "list-b"],
      "connected workers first",
    );
  });

  it("lists the workers of a killed instance as gone through the other one (PostgreSQL pass)", async function () {
    if (!other) return this.skip();
    const viaOther = new CloudClient({ baseUrl: other.cloudUrl, token: account.token, projectId: account.projectId });
    assert.equal(byName(await viaOther.listWorkers(), "list-a")?.state, "idle");
    await cloud.kill(); // no close frame, no last write: only the missing beats tell
    const list = await waitFor("list-a gone through the other instance", (l) => byName(l, "list-a")?.state === "gone", viaOther);
    assert.ok(byName(list, "list-a")?.disconnectedAt, "it says when it was last seen");
  });
});
