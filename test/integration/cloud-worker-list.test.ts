/**
 * The worker list (`GET /v1/workers`, `svc workers`) on a real cloud with real `svc worker` processes: each is listed
 * with its machine's devices as it connects, shows the job it trains and is idle again after, and is listed as gone
 * once it stops. In the PostgreSQL pass a second instance on the same database lists the workers linked to the first,
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
import { pollUntil } from "../support/poll.js";
import { createTempDir, type TempDir } from "../support/tmp.js";

describe("the worker list: connected workers, their devices and what they do", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let other: TestCloud | undefined;
  let account: Account;
  let workDir: TempDir;
  const workers = new Map<string, { child: ChildProcess; log: () => string; exited: Promise<unknown> }>();

  const startWorker = (name: string) => {
    const token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    const child = spawn(process.execPath, [cliPath, "worker", "--cloud", cloud.cloudUrl, "--name", name, "--work-dir", workDir.path, "--backend", "tfjs"], {
      env: { ...process.env, SVC_WORKER_TOKEN: token },
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
  });
  after(async () => {
    for (const { child, exited } of workers.values()) {
      child.kill("SIGKILL");
      await exited;
    }
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
    assert.match(lines[0], /^NAME\s+HOST\s+STATE\s+BACKENDS\s+DEVICES\s+RANKS\s+LAST SEEN$/);
    assert.match(
      cli.stdout,
      new RegExp(`^${trainer.name}\\s+\\S+\\s+training ${job.id}\\s+tfjs\\s+.+ × ${os.cpus().length} cores \\(.+ GiB\\)\\s+1\\s+\\d+ s ago$`, "m"),
    );
    const json = spawnSync(process.execPath, [cliPath, "workers", "--json"], {
      encoding: "utf8",
      env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl, HOME: path.join(cloud.home, "user") },
    });
    assert.deepEqual(
      (JSON.parse(json.stdout) as WorkerInfo[]).map((w) => [w.name, w.state]),
      training.map((w) => [w.name, w.state]),
    );

    await account.client.cancelJob(job.id);
    await waitFor("both workers idle after the cancel", (l) => l.length === 2 && l.every((w) => w.state === "idle"));
  });

  it("lists the workers linked to another instance on the same database (PostgreSQL pass)", async function () {
    if (!cloud.databaseUrl) return this.skip(); // one instance per data dir on SQLite
    other = await cloud.restart();
    const viaOther = new CloudClient({ baseUrl: other.cloudUrl, token: account.token, projectId: account.projectId });
    const list = await viaOther.listWorkers();
    assert.deepEqual(
      list.map((w) => [w.name, w.state]),
      [
        ["list-a", "idle"],
        ["list-b", "idle"],
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
