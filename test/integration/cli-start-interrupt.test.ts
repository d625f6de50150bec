/**
 * `svc start` on the edges a user meets in the first hour (issue 12 item 10): Ctrl-C while the
 * cloud is down, and `--json` with a trainer that writes to the console. Real cloud process (no
 * worker, so the job stays queued until the test acts), real CLI process.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, rmSync } from "node:fs";
import path from "node:path";
import { createInterface } from "node:readline";
import { readProjectState } from "../../sdk/state.js";
import { stopChild } from "../../sdk/platform/stop.js";
import { createTrainer } from "../../sdk/trainer/trainer.js";
import { pollUntil } from "../support/poll.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";
import { cliProjectClient, quickstartProject } from "../support/quickstart.js";

interface StartRun {
  child: ChildProcess;
  stdout: string[];
  stderr: () => string;
  exited: Promise<number | null>;
}

function svcStart(cloud: TestCloud, cwd: string, args: string[], { ipc = false } = {}): StartRun {
  const child = spawn(process.execPath, [cliPath, "start", ...args], {
    cwd,
    env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl },
    stdio: ["pipe", "pipe", "pipe", ...(ipc ? ["ipc" as const] : [])],
  });
  const stdout: string[] = [];
  createInterface({ input: child.stdout! }).on("line", (line) => stdout.push(line));
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  return { child, stdout, stderr: () => stderr, exited };
}

/** The job `svc start` created, once it exists (read through the project's own credentials). */
async function createdJobId(cloud: TestCloud, dir: string, run: StartRun): Promise<string> {
  return pollUntil(
    async () => {
      if (!(await readProjectState(dir))) return undefined;
      return (await (await cliProjectClient(cloud, dir)).listJobs())[0]?.id;
    },
    {
      timeoutMs: 60_000,
      description: "svc start to create its job",
      abortIf: () => (run.child.exitCode !== null ? `svc start exited:\n${run.stderr()}` : undefined),
    },
  );
}

describe("svc start: interrupts and --json output (real processes)", function () {
  this.timeout(120_000);
  let cloud: TestCloud;
  let dir: string;

  beforeEach(async () => {
    cloud = await startTestCloud();
    dir = quickstartProject();
  });
  afterEach(async () => {
    await cloud.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("Ctrl-C with the cloud down prints one readable line, no stack trace", async () => {
    const run = svcStart(cloud, dir, []);
    await createdJobId(cloud, dir, run);
    await cloud.kill();
    run.child.kill("SIGINT");
    const code = await run.exited;
    const stderr = run.stderr();
    assert.doesNotMatch(stderr, /^\s+at /m, `no stack trace:\n${stderr}`);
    const lines = stderr.trim().split("\n");
    assert.equal(lines[0], "svc: cancelling the job (Ctrl-C again to exit now)");
    assert.equal(lines.length, 2, stderr);
    assert.match(lines[1], /^svc: couldn't cancel job [0-9a-f-]{36}: cannot reach the svc cloud at http:\/\/127\.0\.0\.1:\d+/);
    assert.equal(code, 130);
  });

  it("the studio's Stop as on Windows: a drain request over IPC, no signal, cancels the job and svc start exits 130", async () => {
    const run = svcStart(cloud, dir, [], { ipc: true });
    const jobId = await createdJobId(cloud, dir, run);
    assert.equal(await stopChild(run.child, { graceMs: 60_000, platform: "win32" }), "drained", run.stderr());
    assert.equal(await run.exited, 130, run.stderr());
    assert.match(run.stderr(), /svc: cancelling the job/);
    assert.equal((await (await cliProjectClient(cloud, dir)).getJob(jobId)).status, "cancelled");
  });

  it("--json keeps stdout to JSON lines: the trainer's own console output goes to stderr", async () => {
    appendFileSync(path.join(dir, "src", "svc", "index.ts"), '\nconsole.log("hello from the trainer");\nconsole.info("info from the trainer");\n');
    const run = svcStart(cloud, dir, ["--json"]);
    const jobId = await createdJobId(cloud, dir, run);
    // No worker takes the job: cancelling it from outside ends its stream, and svc start with it.
    await (await cliProjectClient(cloud, dir)).cancelJob(jobId);
    assert.equal(await run.exited, 1, run.stderr());
    for (const line of run.stdout) assert.doesNotThrow(() => JSON.parse(line), `stdout line is not JSON: ${line}`);
    assert.match(run.stderr(), /hello from the trainer/);
    assert.match(run.stderr(), /info from the trainer/);
  });

  it("a trainer stopped before its job is created leaves no job (the studio's Stop during the upload), nor does an abortSignal aborted before start()", async () => {
    const saved = { SVC_HOME: process.env.SVC_HOME, SVC_CLOUD_URL: process.env.SVC_CLOUD_URL };
    process.env.SVC_HOME = cloud.home;
    process.env.SVC_CLOUD_URL = cloud.cloudUrl;
    try {
      const options = { name: "stopped", model: "svc-tiny", dataset: "data/train.jsonl", maxSteps: 5, projectDir: dir };
      const stop = new AbortController();
      const starting = createTrainer(options).start({ signal: stop.signal });
      stop.abort(); // while it reads, asks the cloud and uploads
      await assert.rejects(starting, (err: Error) => err.name === "TrainerStoppedError" && /was stopped before its job was created/.test(err.message));
      const state = await readProjectState(dir);
      const client = await cliProjectClient(cloud, dir);
      assert.deepEqual(state ? await client.listJobs() : [], [], "no job");

      // An abortSignal that fired before start() (the listener would never run) still cancels the job it makes.
      const aborted = new AbortController();
      aborted.abort();
      await assert.rejects(createTrainer({ ...options, abortSignal: aborted.signal }).start(), /was stopped before its job was created/);
      // The probe sees a job when nothing stops it.
      const job = await createTrainer(options).start();
      assert.deepEqual(
        (await client.listJobs()).map((j) => j.id),
        [job.id],
      );
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  });
});
