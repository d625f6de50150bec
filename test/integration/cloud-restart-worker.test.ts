/**
 * A cloud that dies mid-training comes back on the same data dir and ports (issue 11): the `svc
 * worker` that was training keeps its job, reconnects to the restarted cloud with its backoff,
 * resends what was not acknowledged, and finishes the job. One SDK reader follows the job across
 * the outage and sees every event once, in order. Runs on SQLite and again on PostgreSQL.
 */
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { CloudClient } from "../../sdk/client.js";
import type { JobEvent } from "../../sdk/wire.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { freePort } from "../support/ports.js";
import { startTestCloud, startWorkerProcess, type TestCloud } from "../support/cloud.js";
import { newAccount, uploadQuickstartData } from "../support/api.js";

describe("cloud kill -9 and restart: the surviving worker resumes its job and finishes it", function () {
  this.timeout(240_000);
  let cloud: TestCloud | undefined;
  let again: TestCloud | undefined;
  let worker: ChildProcess | undefined;
  let workDir: TempDir | undefined;

  after(async () => {
    worker?.kill("SIGKILL");
    await again?.dispose();
    await cloud?.dispose();
    await workDir?.remove();
  });

  it("keeps the job running across the outage: completed, every event once, the adapter uploaded", async () => {
    // Fixed ports, so the worker's --cloud URL and the reader's base URL reach the restarted cloud.
    const ports = ["--port", String(await freePort()), "--edge-port", String(await freePort())];
    // A long grace: under CI load the restart may take seconds; the job must not be failed meanwhile.
    const env = { SVC_WORKER_GRACE_MS: "60000" };
    cloud = await startTestCloud({ args: ports, env });
    const account = await newAccount(cloud);
    workDir = await createTempDir("restart-worker");
    const survivor = startWorkerProcess(cloud, { name: "survivor", workDir: workDir.path });
    worker = survivor;

    const job = await account.client.createJob({
      name: "survives-a-restart",
      ...(await uploadQuickstartData(account.client, false)),
      config: { model: "svc-tiny", maxSteps: 150, learningRate: 3e-3, batchSize: 4, seed: 11 },
    });
    const events: JobEvent[] = [];
    let outage: Promise<void> | undefined;
    // The SDK reader reconnects with Last-Event-ID after a network break, as EventSource does.
    for await (const event of account.client.jobEvents(job.id)) {
      events.push(event);
      if (event.type === "training.log" && !outage) {
        outage = (async () => {
          await cloud!.kill();
          again = await cloud!.restart({ args: ports, env });
        })();
      }
    }
    await outage;
    assert.ok(outage, "the job trained long enough to lose its cloud mid-way");
    assert.deepEqual(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
      "every event once, in order, with no gap",
    );
    const last = events.at(-1)!;
    assert.equal(last.type, "training.completed", `ended with ${last.type}: ${JSON.stringify(last.data)}\n${survivor.log()}`);
    assert.equal(events.filter((e) => e.type === "training.started").length, 1, "the job was resumed, not started over");

    const after = new CloudClient({ baseUrl: again!.cloudUrl, token: account.token, projectId: account.projectId });
    assert.equal((await after.getJob(job.id)).status, "completed");
    // The history read back from the store equals what the live reader saw.
    const stored: JobEvent[] = [];
    for await (const event of after.jobEvents(job.id)) stored.push(event);
    assert.deepEqual(
      stored.map((e) => [e.seq, e.type]),
      events.map((e) => [e.seq, e.type]),
    );
    assert.ok(
      (await after.listArtifacts(job.id)).some((artifact) => artifact.kind === "adapter"),
      "the final adapter reached the restarted cloud",
    );
  });
});
