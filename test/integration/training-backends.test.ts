/**
 * The compute backends end to end: a cloud whose worker is told SVC_TRAIN_BACKEND trains the
 * quickstart on torch (a Python process) or on tfjs, says which in the job's first event, and
 * uploads the GGUF and PEFT adapters; a torch process killed mid-job fails that job readably and
 * the worker trains the next one; torch asked for where it cannot start is a clear error.
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { requireTorchStack } from "../support/torchStack.js";
import { descendantPids } from "../support/processes.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { cliProjectClient as projectClient, quickstartProject, runSvc, startUntilTraining } from "../support/quickstart.js";

/** The quickstart, shortened: `steps` steps with a checkpoint every 4. */
const shortened = (steps: number) => quickstartProject({ maxSteps: steps, saveSteps: 4, evalSteps: 4 });
const svcStart = (cloud: TestCloud, dir: string, env: Record<string, string> = {}) => runSvc(cloud, dir, ["start"], env);

/** The training.started payload: the first line of `svc start` that is a JSON object. */
function startedPayload(stdout: string): Record<string, unknown> {
  const line = stdout.split("\n").find((l) => l.startsWith("{"));
  assert.ok(line, `no training.started payload in:\n${stdout}`);
  return JSON.parse(line);
}

describe("training backends: torch and tfjs behind one worker", function () {
  this.timeout(300_000);

  describe("SVC_TRAIN_BACKEND=torch", function () {
    let cloud: TestCloud;
    let dir: string;
    before(async function () {
      await requireTorchStack(this);
      cloud = await startTestCloud({ workers: 1, env: { SVC_TRAIN_BACKEND: "torch", SVC_WORKER_GRACE_MS: "1500" } });
      dir = shortened(8);
    });
    after(async () => {
      await cloud?.dispose();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("trains the quickstart on torch, says so in the first event, uploads GGUF and PEFT adapters", async () => {
      const run = svcStart(cloud, dir);
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const started = startedPayload(run.stdout);
      assert.equal(started.backend, "torch");
      assert.match(String(started.device), /^cpu/);
      assert.match(String(started.backendReason), /^torch was asked for/);
      const losses = [...run.stdout.matchAll(/^step=\d+ loss=([\d.]+)/gm)].map((m) => Number(m[1]));
      assert.equal(losses.length, 8);
      assert.ok(losses[7] < losses[0], `loss ${losses[0]} -> ${losses[7]}`);
      const client = await projectClient(cloud, dir);
      const [job] = await client.listJobs();
      const names = (await client.listArtifacts(job.id)).map((a) => a.name).sort();
      for (const name of ["adapter.gguf", "adapter_config.json", "adapter_model.safetensors", "checkpoint-4.gguf", "checkpoint-4.adapter_model.safetensors"]) {
        assert.ok(names.includes(name), `${name} missing from ${names.join(", ")}`);
      }
    });

    it("a torch process killed mid-job fails that job readably, and the worker trains the next one", async () => {
      const longDir = shortened(5000);
      try {
        const { exited } = await startUntilTraining(cloud, longDir);
        // This cloud's torch process only: other runs on the machine may train on torch too.
        const pythons = descendantPids(cloud.process.pid!, "svc_torch");
        assert.equal(pythons.length, 1, "one torch process trains the job");
        process.kill(Number(pythons[0]), "SIGKILL");
        assert.equal(await exited, 1);
        const client = await projectClient(cloud, longDir);
        const [job] = await client.listJobs();
        assert.equal(job.status, "failed");
        assert.match(job.error ?? "", /torch backend process exited/);
      } finally {
        rmSync(longDir, { recursive: true, force: true });
      }
      const next = svcStart(cloud, dir);
      assert.equal(next.status, 0, next.stderr + next.stdout);
      assert.match(next.stdout.trim().split("\n").at(-1) ?? "", /completed$/);
    });
  });

  describe("SVC_TRAIN_BACKEND=tfjs, and torch where it cannot start", function () {
    let cloud: TestCloud;
    let dir: string;
    // A fresh project each time: its .svc/state.json names a project of one cloud only.
    beforeEach(() => {
      dir = shortened(4);
    });
    afterEach(async () => {
      await cloud?.dispose();
      rmSync(dir, { recursive: true, force: true });
    });

    it("tfjs: the first event names it", async () => {
      cloud = await startTestCloud({ workers: 1, env: { SVC_TRAIN_BACKEND: "tfjs" } });
      const run = svcStart(cloud, dir);
      assert.equal(run.status, 0, run.stderr + run.stdout);
      assert.equal(startedPayload(run.stdout).backend, "tfjs");
    });

    it("SVC_TRAIN_BACKEND of svc start is the job's choice, over the worker's default", async function () {
      await requireTorchStack(this);
      cloud = await startTestCloud({ workers: 1, env: { SVC_TRAIN_BACKEND: "tfjs" } });
      const run = svcStart(cloud, dir, { SVC_TRAIN_BACKEND: "torch" });
      assert.equal(run.status, 0, run.stderr + run.stdout);
      const started = startedPayload(run.stdout);
      assert.equal(started.backend, "torch");
      assert.match(String(started.backendReason), /^torch was asked for/);
      const client = await projectClient(cloud, dir);
      const [job] = await client.listJobs();
      assert.equal(job.config.backend, "torch");
    });

    it("an unknown SVC_TRAIN_BACKEND is refused before anything is uploaded", async () => {
      cloud = await startTestCloud({ workers: 1 });
      const run = svcStart(cloud, dir, { SVC_TRAIN_BACKEND: "gpu" });
      assert.notEqual(run.status, 0);
      assert.match(run.stdout + run.stderr, /backend \(from SVC_TRAIN_BACKEND\) must be one of auto, torch, tfjs, got "gpu"/);
    });

    it("torch asked for with no usable Python: the job fails saying why", async () => {
      cloud = await startTestCloud({ workers: 1, env: { SVC_TRAIN_BACKEND: "torch", SVC_PYTHON: "/nonexistent/python3" } });
      const run = svcStart(cloud, dir);
      assert.equal(run.status, 1);
      assert.match(run.stdout + run.stderr, /the torch backend was asked for but cannot start: .*\/nonexistent\/python3/);
    });
  });
});
