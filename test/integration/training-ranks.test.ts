/**
 * `svc worker --procs 2`: a remote worker trains the quickstart as two torch ranks (torchrun, gloo),
 * the job's first event says worldSize 2, and a rank killed mid-job fails the job with a sentence
 * that names the rank while the worker stays up.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { CloudClient } from "../../sdk/client.js";
import { readProjectState } from "../../sdk/state.js";
import { pollUntil } from "../support/poll.js";
import { descendantPids } from "../support/processes.js";
import { replaceOnce } from "../support/text.js";
import { requireTorchStack } from "../support/torchStack.js";
import { cliPath, repoRoot, startTestCloud, type TestCloud } from "../support/cloud.js";

function quickstartProject(steps: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "svc-ranks-"));
  cpSync(path.join(repoRoot, "examples", "quickstart"), dir, {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}.svc`) && !src.includes("node_modules"),
  });
  const source = path.join(dir, "src/svc/index.ts");
  writeFileSync(source, replaceOnce(replaceOnce(readFileSync(source, "utf8"), "maxSteps: 60", `maxSteps: ${steps}`), "batchSize: 8", "batchSize: 4"));
  return dir;
}

function rankOf(pid: number): number | undefined {
  const rank = /(?:^|\0)RANK=(\d+)\0/.exec(readFileSync(`/proc/${pid}/environ`, "latin1"))?.[1];
  return rank === undefined ? undefined : Number(rank);
}

describe("svc worker --procs 2: one job on two torch ranks", function () {
  this.timeout(300_000);
  let cloud: TestCloud;
  let worker: ChildProcess;
  let workDir: string;
  const dirs: string[] = [];

  before(async function () {
    if (process.platform !== "linux") this.skip();
    await requireTorchStack(this);
    cloud = await startTestCloud({ workers: 0 });
    workDir = mkdtempSync(path.join(os.tmpdir(), "svc-ranks-work-"));
    const token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    worker = spawn(
      process.execPath,
      [cliPath, "worker", "--cloud", cloud.cloudUrl, "--name", "ddp", "--work-dir", workDir, "--backend", "torch", "--procs", "2"],
      {
        env: { ...process.env, SVC_WORKER_TOKEN: token },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    worker.stderr!.resume();
  });
  after(async () => {
    if (worker && worker.exitCode === null) {
      const exited = new Promise((resolve) => worker.on("exit", resolve));
      worker.kill("SIGTERM");
      await exited;
    }
    await cloud?.dispose();
    for (const dir of [...dirs, workDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function projectClient(dir: string): Promise<CloudClient> {
    const credentials = JSON.parse(readFileSync(path.join(cloud.home, "credentials.json"), "utf8"));
    return new CloudClient({ baseUrl: cloud.cloudUrl, token: credentials.token, projectId: (await readProjectState(dir))?.projectId });
  }

  it("trains the quickstart, and training.started says worldSize 2", async () => {
    const dir = quickstartProject(4);
    dirs.push(dir);
    const run = spawnSync(process.execPath, [cliPath, "start"], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl },
      timeout: 240_000,
    });
    assert.equal(run.status, 0, run.stderr + run.stdout);
    const started = JSON.parse(run.stdout.split("\n").find((l) => l.startsWith("{"))!);
    assert.equal(started.worldSize, 2);
    assert.equal(started.backend, "torch");
    assert.match(String(started.backendReason), /× 2 ranks \(gloo\)$/);
    assert.equal([...run.stdout.matchAll(/^step=\d+ loss=/gm)].length, 4);
  });

  it("a rank killed mid-job fails the job naming the rank; no rank is left", async () => {
    const dir = quickstartProject(5000);
    dirs.push(dir);
    const child = spawn(process.execPath, [cliPath, "start"], { cwd: dir, env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl } });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const lines: string[] = [];
    await new Promise<void>((resolve, reject) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        lines.push(line);
        if (/^step=\d+ loss=/.test(line)) resolve();
      });
      void exited.then(() => reject(new Error(`svc start exited early:\n${lines.join("\n")}`)));
    });
    const ranks = descendantPids(worker.pid!, "svc_torch_server.py").filter((pid) => rankOf(pid) !== undefined);
    assert.equal(ranks.length, 2, "two ranks train the job");
    process.kill(ranks.find((pid) => rankOf(pid) === 1)!, "SIGKILL");
    assert.equal(await exited, 1);
    const [job] = await (await projectClient(dir)).listJobs();
    assert.equal(job.status, "failed");
    assert.match(job.error ?? "", /rank 1 of 2 failed \(Signal 9 \(SIGKILL\)/);
    await pollUntil(() => descendantPids(worker.pid!, "svc_torch").length === 0, { timeoutMs: 60_000, description: "torchrun and the ranks to exit" });
    assert.equal(worker.exitCode, null, "the worker is still up");
  });
});
