/**
 * `svc worker --procs 2`: a remote worker trains the quickstart as two torch ranks (torchrun, gloo),
 * the job's first event says worldSize 2, and a rank killed mid-job fails the job with a sentence
 * that names the rank while the worker stays up.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { pollUntil } from "../support/poll.js";
import { descendantPids } from "../support/processes.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { requireTorchStack } from "../support/torchStack.js";
import { startTestCloud, startWorkerProcess, type TestCloud } from "../support/cloud.js";
import { cliProjectClient, quickstartProject, runSvc, startUntilTraining } from "../support/quickstart.js";

const shortened = (steps: number) => quickstartProject({ maxSteps: steps, batchSize: 4 });

function rankOf(pid: number): number | undefined {
  const rank = /(?:^|\0)RANK=(\d+)\0/.exec(readFileSync(`/proc/${pid}/environ`, "latin1"))?.[1];
  return rank === undefined ? undefined : Number(rank);
}

describe("svc worker --procs 2: one job on two torch ranks", function () {
  this.timeout(300_000);
  let cloud: TestCloud;
  let worker: ReturnType<typeof startWorkerProcess>;
  let workDir: TempDir;
  const dirs: string[] = [];

  before(async function () {
    if (process.platform !== "linux") this.skip();
    await requireTorchStack(this);
    cloud = await startTestCloud({ workers: 0 });
    workDir = await createTempDir("ranks-work");
    worker = startWorkerProcess(cloud, { name: "ddp", workDir: workDir.path, backend: "torch", args: ["--procs", "2"] });
  });
  after(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker.on("exit", resolve));
      worker.kill("SIGTERM");
      await exited;
    }
    await cloud?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await workDir?.remove();
  });

  it("trains the quickstart, and training.started says worldSize 2", async () => {
    const dir = shortened(4);
    dirs.push(dir);
    const run = runSvc(cloud, dir, ["start"]);
    assert.equal(run.status, 0, run.stderr + run.stdout);
    const started = JSON.parse(run.stdout.split("\n").find((l) => l.startsWith("{"))!);
    assert.equal(started.worldSize, 2);
    assert.equal(started.backend, "torch");
    assert.match(String(started.backendReason), /× 2 ranks \(gloo\)$/);
    assert.equal([...run.stdout.matchAll(/^step=\d+ loss=/gm)].length, 4);
  });

  it("a rank killed mid-job fails the job naming the rank; no rank is left", async () => {
    const dir = shortened(5000);
    dirs.push(dir);
    const { exited } = await startUntilTraining(cloud, dir);
    const ranks = descendantPids(worker.pid!, "svc_torch_server.py").filter((pid) => rankOf(pid) !== undefined);
    assert.equal(ranks.length, 2, "two ranks train the job");
    process.kill(ranks.find((pid) => rankOf(pid) === 1)!, "SIGKILL");
    assert.equal(await exited, 1);
    const [job] = await (await cliProjectClient(cloud, dir)).listJobs();
    assert.equal(job.status, "failed");
    assert.match(job.error ?? "", /rank 1 of 2 failed \(Signal 9 \(SIGKILL\)/);
    await pollUntil(() => descendantPids(worker.pid!, "svc_torch").length === 0, { timeoutMs: 60_000, description: "torchrun and the ranks to exit" });
    assert.equal(worker.exitCode, null, "the worker is still up");
  });
});
