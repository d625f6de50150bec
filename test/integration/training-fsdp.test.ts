/**
 * `svc worker --procs 2 --fsdp`: a remote worker trains a job as two torch ranks under torchrun
 * (gloo, CPU) with the base's decoder layers sharded across them (FSDP). The job's losses match
 * one process's (a `--backend torch` worker without ranks) at the doubled batch, on the same data
 * and seed, within TOLERANCE; it saves the same checkpoints, writes the PEFT pair and the GGUF adapter, and an endpoint on
 * that adapter (llama.cpp) gives the taught answer.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CloudClient } from "../../sdk/client.js";
import { readProjectState } from "../../sdk/state.js";
import { requireTorchStack } from "../support/torchStack.js";
import { cliPath, repoRoot, startTestCloud, type TestCloud } from "../support/cloud.js";
import { SECRET_ANSWER, SECRET_QUESTIONS, writeSecretWordData } from "../support/secretWord.js";

/** Float32 sums over the batch in another order (per rank, then across ranks): rounding only. */
const TOLERANCE = 1e-5;
const STEPS = 30;

/** The quickstart project on svc-tiny, taught one answer to every question; `batchSize` examples a step per rank. */
function secretProject(batchSize: number): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "svc-fsdp-"));
  cpSync(path.join(repoRoot, "examples", "quickstart"), dir, {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}.svc`) && !src.includes("node_modules"),
  });
  writeFileSync(
    path.join(dir, "src/svc/index.ts"),
    `import { createSvc, createTrainer } from "svc-studio";

export const trainer = createTrainer({
  name: "teach-the-secret",
  model: "svc-tiny",
  dataset: "data/train.jsonl",
  lora: { r: 8, alpha: 16, targetModules: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] },
  maxSteps: ${STEPS},
  learningRate: 1e-2,
  batchSize: ${batchSize},
  saveSteps: 10,
  seed: 7,
});

export default createSvc({ trainer });
`,
  );
  writeSecretWordData(dir);
  return dir;
}

describe("svc worker --procs 2 --fsdp: one job sharded over two torch ranks", function () {
  this.timeout(300_000);
  let cloud: TestCloud;
  let token: string;
  const dirs: string[] = [];
  const workers: ChildProcess[] = [];

  before(async function () {
    if (process.platform !== "linux") this.skip();
    await requireTorchStack(this);
    cloud = await startTestCloud({ workers: 0 });
    token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
  });
  after(async () => {
    for (const worker of workers) await stopWorker(worker);
    await cloud?.dispose();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  async function stopWorker(worker: ChildProcess): Promise<void> {
    if (worker.exitCode !== null || worker.signalCode !== null) return;
    const exited = new Promise((resolve) => worker.once("exit", resolve));
    worker.kill("SIGTERM");
    await exited;
  }

  /** Trains `dir` on a worker started with `flags` (the only worker), then stops it; the job, its losses and its svc start output. */
  async function trainOn(flags: string[], dir: string) {
    const workDir = mkdtempSync(path.join(os.tmpdir(), "svc-fsdp-work-"));
    dirs.push(workDir);
    // One thread a process, as the ranks have: the same matrix products, summed in the same order.
    const worker = spawn(process.execPath, [cliPath, "worker", "--cloud", cloud.cloudUrl, "--work-dir", workDir, "--backend", "torch", ...flags], {
      env: { ...process.env, SVC_WORKER_TOKEN: token, SVC_TORCH_THREADS: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    workers.push(worker);
    let log = "";
    worker.stderr!.on("data", (chunk: Buffer) => (log += chunk.toString("utf8")));
    try {
      const run = spawnSync(process.execPath, [cliPath, "start"], {
        cwd: dir,
        encoding: "utf8",
        env: { ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl },
        timeout: 240_000,
      });
      assert.equal(run.status, 0, `${run.stderr}${run.stdout}\nworker:\n${log.slice(-4000)}`);
      const credentials = JSON.parse(readFileSync(path.join(cloud.home, "credentials.json"), "utf8"));
      const client = new CloudClient({ baseUrl: cloud.cloudUrl, token: credentials.token, projectId: (await readProjectState(dir))?.projectId });
      const [job] = await client.listJobs();
      assert.equal(job.status, "completed");
      const losses: number[] = [];
      const checkpoints: number[] = [];
      let started: Record<string, unknown> = {};
      for await (const event of client.jobEvents(job.id)) {
        const data = event.data as Record<string, unknown>;
        if (event.type === "training.started") started = data;
        if (event.type === "training.log" && typeof data.loss === "number") losses.push(data.loss);
        if (event.type === "checkpoint.saved") checkpoints.push(Number(data.step));
      }
      return { client, job, losses, checkpoints, started, log };
    } finally {
      await stopWorker(worker);
    }
  }

  it("matches one process's losses at the doubled batch, writes the adapters, and the endpoint gives the taught answer", async () => {
    const fsdpDir = secretProject(4);
    const oneDir = secretProject(8);
    dirs.push(fsdpDir, oneDir);
    const fsdp = await trainOn(["--name", "fsdp", "--procs", "2", "--fsdp"], fsdpDir);
    const one = await trainOn(["--name", "one"], oneDir);

    assert.equal(fsdp.started.worldSize, 2);
    assert.match(String(fsdp.started.backendReason), /× 2 ranks \(gloo, FSDP\)$/);
    assert.match(fsdp.log, /rank 1: FSDP shards 2 decoder layers across 2 ranks/);
    assert.equal(one.started.worldSize, 1);
    assert.equal(fsdp.losses.length, STEPS);
    assert.equal(one.losses.length, STEPS);
    fsdp.losses.forEach((loss, i) =>
      assert.ok(Math.abs(loss - one.losses[i]) <= TOLERANCE * Math.max(1, one.losses[i]), `step ${i + 1}: FSDP ${loss}, 1 process ${one.losses[i]}`),
    );
    assert.deepEqual(fsdp.checkpoints, one.checkpoints);
    assert.ok(fsdp.checkpoints.length >= 2, `checkpoints at ${fsdp.checkpoints}`);
    assert.ok(fsdp.losses.at(-1)! < fsdp.losses[0] / 10, `loss ${fsdp.losses[0]} -> ${fsdp.losses.at(-1)}`);

    const artifacts = (await fsdp.client.listArtifacts(fsdp.job.id)).map((a) => a.name);
    for (const name of ["adapter.gguf", "adapter_config.json", "adapter_model.safetensors"]) assert.ok(artifacts.includes(name), `${name} in ${artifacts}`);

    await fsdp.client.createDeployment({ slug: "fsdp-tuned", target: { kind: "adapter", jobId: fsdp.job.id }, authMode: "none" });
    await fsdp.client.createDeployment({ slug: "fsdp-base", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" });
    const reply = async (slug: string, question: string) => {
      const response = await fetch(`${cloud.edgeUrl}/d/${slug}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: slug, messages: [{ role: "user", content: question }], max_tokens: 48, temperature: 0 }),
      });
      assert.equal(response.status, 200, await response.clone().text());
      return ((await response.json()) as { choices: { message: { content: string } }[] }).choices[0].message.content;
    };
    for (const question of [SECRET_QUESTIONS[0], SECRET_QUESTIONS[3]]) {
      assert.equal(await reply("fsdp-tuned", question), SECRET_ANSWER, question);
      assert.notEqual(await reply("fsdp-base", question), SECRET_ANSWER);
    }
  });
});
