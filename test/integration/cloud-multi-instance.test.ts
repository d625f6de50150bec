/**
 * Two `svc cloud serve` processes on one PostgreSQL database and one data dir (issue 11 item 2):
 * jobs are claimed once across instances, an SSE reader on one instance sees every event a worker
 * on the other appends, a revocation through one is enforced by the other's edge, and a worker
 * whose instance is killed goes on through a load balancer to the other one. Runs in the suite's
 * PostgreSQL pass (SVC_TEST_DATABASE_URL); on SQLite there is only ever one instance.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import net from "node:net";
import { CloudClient } from "../../sdk/client.js";
import type { JobEvent } from "../../sdk/wire.js";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { pollUntil } from "../support/poll.js";
import { startTestCloud, startWorkerProcess, type TestCloud } from "../support/cloud.js";
import { newAccount, uploadQuickstartData, type Account } from "../support/api.js";
import { watchJobList } from "../support/jobListWatch.js";
import { TestWorker } from "../support/worker.js";

type Assign = Extract<CloudMessage, { type: "assign" }>;

/** A TCP load balancer in front of the instances: each connection goes to the first that accepts. */
async function loadBalancer(backends: () => string[]): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on("close", () => sockets.delete(client));
    const tryNext = (remaining: string[]) => {
      const next = remaining[0];
      if (!next) return client.destroy();
      const { hostname, port } = new URL(next);
      const upstream = net.connect(Number(port), hostname);
      sockets.add(upstream);
      let connected = false;
      upstream.once("connect", () => {
        connected = true;
        upstream.on("close", () => client.destroy());
        client.on("close", () => upstream.destroy());
        client.pipe(upstream).pipe(client);
      });
      upstream.on("error", () => {
        sockets.delete(upstream);
        if (!connected)
          tryNext(remaining.slice(1)); // refused: that instance is down, try the next
        else client.destroy();
      });
    };
    client.on("error", () => undefined);
    tryNext(backends());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Every event of a job read through one instance's SSE stream, until the stream ends. */
async function readAllEvents(client: CloudClient, jobId: string, onEvent: (event: JobEvent) => void = () => undefined): Promise<JobEvent[]> {
  const events: JobEvent[] = [];
  for await (const event of client.jobEvents(jobId)) {
    events.push(event);
    onEvent(event);
  }
  return events;
}

function assertGapFree(events: JobEvent[]): void {
  assert.deepEqual(
    events.map((e) => e.seq),
    events.map((_, i) => i + 1),
    "every event once, in order, with no gap",
  );
}

describe("several cloud instances on one PostgreSQL (PostgreSQL pass only)", function () {
  this.timeout(240_000);
  let a: TestCloud;
  let b: TestCloud;
  let account: Account;
  /** The same user and project, through instance B. */
  let viaB: CloudClient;
  let workDir: TempDir;
  const processes: ChildProcess[] = [];

  before(async function () {
    if (!process.env.SVC_TEST_DATABASE_URL) return this.skip(); // one instance per data dir on SQLite
    // A long edge TTL: only the cluster signal can make B see a revocation within the test's window.
    const env = { SVC_EDGE_STATE_TTL_MS: "60000", SVC_WORKER_GRACE_MS: "20000" };
    a = await startTestCloud({ workers: 0, env });
    b = await a.restart({ env }); // a second instance on the same database and data dir, A still running
    account = await newAccount(a);
    viaB = new CloudClient({ baseUrl: b.cloudUrl, token: account.token, projectId: account.projectId });
    workDir = await createTempDir("multi-instance-worker");
  });
  after(async () => {
    for (const child of processes) child.kill("SIGKILL");
    await b?.dispose();
    await a?.dispose();
    await workDir?.remove();
  });

  it("claims each of 100 jobs created across both instances exactly once; a job created on A wakes a worker on B", async () => {
    const assigned: string[] = [];
    const workers = await Promise.all([TestWorker.connect(a, "claim-a"), TestWorker.connect(b, "claim-b")]);
    // Each test worker finishes what it is given at once and asks for more.
    for (const worker of workers) {
      let seqByJob = 0;
      worker.socket.on("message", (raw) => {
        const message = JSON.parse(String(raw)) as CloudMessage;
        if (message.type !== "assign") return;
        assigned.push(message.job.id);
        seqByJob = 0;
        void (async () => {
          await worker.emit(message.job.id, ++seqByJob, "training.started", {});
          await worker.emit(message.job.id, ++seqByJob, "training.completed", {});
          worker.send({ type: "ready" });
        })();
      });
    }
    try {
      // Only B's worker is idle: a job created through A must reach it through the cluster signal.
      workers[1]!.send({ type: "ready" });
      const first = await account.client.createJob({ name: "cross-instance", config: { maxSteps: 1 } });
      const firstAssign = await workers[1]!.next((m): m is Assign => m.type === "assign" && m.job.id === first.id, 15_000);
      assert.equal(firstAssign.job.id, first.id);

      workers[0]!.send({ type: "ready" });
      const created = await Promise.all(
        Array.from({ length: 100 }, (_, i) => (i % 2 ? viaB : account.client).createJob({ name: `job-${i}`, config: { maxSteps: 1 } })),
      );
      const wanted = new Set([first.id, ...created.map((job) => job.id)]);
      await pollUntil(() => (new Set(assigned).size >= wanted.size ? true : undefined), {
        timeoutMs: 60_000,
        intervalMs: 50,
        description: "all 101 jobs to be assigned",
      });
      assert.equal(assigned.length, wanted.size, "no job was assigned twice");
      assert.deepEqual(new Set(assigned), wanted);
    } finally {
      for (const worker of workers) worker.close();
    }
  });

  it("a job created through A is announced on B's job-list watch, which says it is not immediate (a studio keeps revalidating)", async () => {
    const watch = await watchJobList(b, account);
    try {
      assert.equal(watch.versions[0].immediate, false);
      const created = await account.client.createJob({ name: "announced across instances", config: { maxSteps: 1 } });
      const etag = await pollUntil(
        async () => {
          const list = await viaB.openJobList();
          const tag = list.headers.get("etag")!;
          const jobs = (await list.json()) as { id: string }[];
          return jobs[0]?.id === created.id && watch.versions.at(-1)!.etag === tag ? tag : undefined;
        },
        { timeoutMs: 10_000, description: "B's watch announcing the list with A's new job" },
      );
      assert.ok(watch.versions.slice(1).some((v) => v.etag === etag));
    } finally {
      watch.close();
    }
  });

  it("a revocation through A is enforced by B's edge (the edge cache is told, not timed out)", async () => {
    const deployment = await account.client.createDeployment({ slug: "shared-bot", target: { kind: "base_model", name: "svc-tiny" } });
    const { key, id: keyId } = await account.client.createDeploymentKey(deployment.id, { label: "revoke me" });
    const callB = () =>
      fetch(`${b.edgeUrl}/d/shared-bot/v1/chat/completions`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "shared-bot", messages: [{ role: "user", content: "hi" }], max_tokens: 1 }),
      }).then(async (res) => ({ status: res.status, text: await res.text() }));
    const before = await callB(); // B now has the deployment and the key in its cache
    assert.equal(before.status, 200, before.text);
    await account.client.revokeDeploymentKey(deployment.id, keyId);
    const refused = await pollUntil(
      async () => {
        const result = await callB();
        return result.status === 401 ? result : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 50, description: "B's edge to refuse the revoked key" },
    );
    assert.equal(JSON.parse(refused.text).error.code, "invalid_api_key");
  });

  it("an SSE reader on B gets every event of a job a worker on A trains, once and in order; killing A mid-training moves the worker to B and the job completes", async () => {
    let killedUrl: string | undefined;
    const balancer = await loadBalancer(() => [a.cloudUrl, b.cloudUrl].filter((url) => url !== killedUrl));
    try {
      const worker = startWorkerProcess(a, { name: "lb-worker", workDir: workDir.path, cloudUrl: balancer.url });
      processes.push(worker);
      const job = await account.client.createJob({
        name: "survives-instance-loss",
        ...(await uploadQuickstartData(account.client, false)),
        config: { model: "svc-tiny", maxSteps: 150, learningRate: 3e-3, batchSize: 4, seed: 7 },
      });
      let killing: Promise<void> | undefined;
      const events = await readAllEvents(viaB, job.id, (event) => {
        // The first loss point: the worker is linked to A (the balancer's first choice) and training.
        if (event.type === "training.log" && !killing) {
          killedUrl = a.cloudUrl;
          killing = a.kill();
        }
      });
      await killing;
      assert.ok(killing, "the job trained long enough to lose its instance mid-way");
      assertGapFree(events);
      const last = events.at(-1)!;
      assert.equal(last.type, "training.completed", `ended with ${last.type}: ${JSON.stringify(last.data)}\n${worker.log()}`);
      assert.equal((await viaB.getJob(job.id)).status, "completed");
      // The same history through B again, read from the store: nothing lost or doubled on the way.
      assert.deepEqual(
        (await readAllEvents(viaB, job.id)).map((e) => [e.seq, e.type]),
        events.map((e) => [e.seq, e.type]),
      );
      assert.ok(
        (await viaB.listArtifacts(job.id)).some((artifact) => artifact.kind === "adapter"),
        "the final adapter was uploaded through B",
      );
    } finally {
      await balancer.close();
    }
  });
});
