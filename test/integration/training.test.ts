/**
 * `svc start` end to end: the quickstart project trains on a real cloud with a real worker
 * (tfjs-wasm), and every bad input fails early with a clear message and leaves no job behind.
 */
import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { rmSync, writeFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { readProjectState } from "../../sdk/state.js";
import { writeTinyModel } from "../support/modelFiles.js";
import { replaceOnce } from "../support/text.js";
import { http } from "../support/api.js";
import { startTestCloud, workerToken, type TestCloud } from "../support/cloud.js";
import { cliProjectClient, quickstartData, quickstartProject, runSvc as svc, startUntilTraining } from "../support/quickstart.js";

const numbers = (lines: string[], re: RegExp) =>
  lines
    .map((l) => re.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]));

describe("svc start: the quickstart trains for real", function () {
  this.timeout(300_000);
  let cloud: TestCloud;
  let dir: string;
  let run: SpawnSyncReturns<string>;

  before(async () => {
    cloud = await startTestCloud({ workers: 1 });
    dir = quickstartProject();
    run = svc(cloud, dir, ["start"]);
  });
  after(async () => {
    await cloud.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("exits 0 and ends with the completed job", () => {
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.trim().split("\n");
    assert.match(lines[0], /^job [0-9a-f-]{36} queued: quickstart-json-answers$/);
    assert.match(lines[lines.length - 1], /^job [0-9a-f-]{36} completed$/);
  });

  it("prints the spec's log forms: started payload, step=N loss=, evalLoss, token accuracies after them, checkpoints, artifacts", () => {
    const lines = run.stdout.trim().split("\n");
    assert.ok(JSON.parse(lines[1]).model === "svc-tiny", "training.started prints its raw JSON payload");
    assert.ok(lines.some((l) => /^step=1 loss=\d+\.\d{4} tokenAccuracy=[01]\.\d{4}$/.test(l)));
    assert.ok(lines.some((l) => /^step=10 loss=\d+\.\d{4} evalLoss=\d+\.\d{4} tokenAccuracy=[01]\.\d{4} evalTokenAccuracy=[01]\.\d{4}$/.test(l)));
    for (const step of [20, 40, 60]) assert.ok(lines.includes(`step=${step}`), `checkpoint at ${step}`);
    assert.ok(lines.includes("4 artifacts"));
  });

  it("shows decreasing training and eval loss", () => {
    const lines = run.stdout.trim().split("\n");
    const losses = numbers(lines, /^step=\d+ loss=(\d+\.\d+)/);
    const evals = numbers(lines, / evalLoss=(\d+\.\d+)/);
    assert.equal(losses.length, 60);
    assert.ok(evals.length >= 6);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    assert.ok(mean(losses.slice(-10)) < mean(losses.slice(0, 10)), `loss should fall: ${losses.slice(0, 3)} ... ${losses.slice(-3)}`);
    assert.ok(evals[evals.length - 1] < evals[0], `eval loss should fall: ${evals}`);
  });

  it("shows eval token accuracy rising as the model learns the answers", () => {
    const accuracies = numbers(run.stdout.trim().split("\n"), / evalTokenAccuracy=(\d\.\d+)/);
    assert.ok(accuracies.length >= 6);
    assert.ok(accuracies.every((a) => a >= 0 && a <= 1));
    assert.ok(accuracies[accuracies.length - 1] > accuracies[0], `eval token accuracy should rise: ${accuracies}`);
  });

  it("leaves the adapter and checkpoints listed by the cloud", async () => {
    const client = await cliProjectClient(cloud, dir);
    const [job] = await client.listJobs();
    assert.equal(job.status, "completed");
    assert.equal(job.artifactCount, 4);
    const artifacts = await client.listArtifacts(job.id);
    assert.deepEqual(
      artifacts
        .filter((a) => a.kind !== "file")
        .map((a) => `${a.kind}@${a.step}`)
        .sort(),
      ["adapter@60", "checkpoint@20", "checkpoint@40", "checkpoint@60"],
    );
    assert.ok(artifacts.every((a) => a.sizeBytes > 0));
  });

  it("reuses the bundle on the next run (svc build picks up edits)", () => {
    const manifest = svc(cloud, dir, ["manifest", "--json"]);
    assert.deepEqual(JSON.parse(manifest.stdout), {
      status: "ok",
      trainer: { name: "quickstart-json-answers", datasets: ["data/train.jsonl", "data/eval.jsonl"], byteTokenLimit: 160 },
    });
    const source = path.join(dir, "src/svc/index.ts");
    writeFileSync(source, replaceOnce(readFileSync(source, "utf8"), '"quickstart-json-answers"', '"renamed"'));
    assert.equal(JSON.parse(svc(cloud, dir, ["manifest", "--json"]).stdout).trainer.name, "quickstart-json-answers", "the old bundle is reused");
    assert.equal(svc(cloud, dir, ["build"]).status, 0);
    assert.equal(JSON.parse(svc(cloud, dir, ["manifest", "--json"]).stdout).trainer.name, "renamed");
  });
});

describe("svc start: bad inputs fail early and clearly", function () {
  this.timeout(120_000);
  let cloud: TestCloud;
  const dirs: string[] = [];
  before(async () => {
    cloud = await startTestCloud({ workers: 0, env: { SVC_MAX_DATASET_BYTES: "20000" } });
  });
  after(async () => {
    await cloud.dispose();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** A quickstart copy with its trainer source or data replaced. */
  function project(edit: { source?: (s: string) => string; train?: string }): string {
    const dir = quickstartProject();
    dirs.push(dir);
    const source = path.join(dir, "src/svc/index.ts");
    if (edit.source) writeFileSync(source, edit.source(readFileSync(source, "utf8")));
    if (edit.train !== undefined) writeFileSync(path.join(dir, "data/train.jsonl"), edit.train);
    return dir;
  }

  async function assertNoJob(dir: string) {
    const state = await readProjectState(dir);
    if (!state) return; // never got as far as a project scope
    assert.deepEqual(await (await cliProjectClient(cloud, dir)).listJobs(), []);
  }

  const good = quickstartData("train.jsonl");

  it("malformed JSONL: names the line, uploads nothing", async () => {
    const lines = good.trim().split("\n");
    lines[2] = "{oops";
    const dir = project({ train: lines.join("\n") + "\n" });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /dataset data\/train\.jsonl is invalid:\n\s+line 3: not valid JSON/);
    await assertNoJob(dir);
  });

  it("empty dataset", async () => {
    const dir = project({ train: "\n" });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /dataset is empty/);
    await assertNoJob(dir);
  });

  it("unknown model: svc start names the field and the trainable models, uploads nothing", async () => {
    const dir = project({ source: (s) => replaceOnce(s, 'model: "svc-tiny"', 'model: "llama-70b"') });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /^svc: model: "llama-70b" is not registered with the cloud; trainable models: svc-tiny\. Register a GGUF with: svc models add/);
    await assertNoJob(dir);
  });

  it("maxSeqLength longer than the model's context: svc start says so, no job", async () => {
    const dir = project({ source: (s) => replaceOnce(s, 'model: "svc-tiny",', 'model: "svc-tiny", maxSeqLength: 4096,') });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /^svc: maxSeqLength: 4096 is longer than the context of "svc-tiny" \(160 tokens\)/);
    await assertNoJob(dir);
  });

  it("a registered serve-only model: svc start gives the one-line reason, no job", async () => {
    const file = path.join(cloud.home, "gemma.gguf");
    await writeTinyModel(file, { architecture: "gemma2", name: "Gemma 2 2B" });
    const res = await http(cloud, "POST", "/v1/models", { token: workerToken(cloud), body: { name: "gemma", path: file } });
    assert.equal(res.status, 201, res.text);
    const dir = project({ source: (s) => replaceOnce(s, 'model: "svc-tiny"', 'model: "gemma"') });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /^svc: model: "gemma" can be served but not trained: .*gemma2/);
    await assertNoJob(dir);
  });

  it("conversations longer than maxSeqLength (svc-tiny counts bytes): the line is named, no job", async () => {
    const dir = project({ source: (s) => replaceOnce(s, 'model: "svc-tiny",', 'model: "svc-tiny", maxSeqLength: 32,') });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /dataset data\/train\.jsonl is invalid:\n\s+line 1: conversation is \d+ tokens, longer than the model's context of 32 tokens/);
    await assertNoJob(dir);
  });

  it("dataset too large: the cloud's 413 message, no job", async () => {
    const dir = project({ train: good.repeat(5) });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /body is too large|too large/i);
    await assertNoJob(dir);
  });

  it("a trainer file that throws: Couldn't read manifest: <error>", async () => {
    const dir = project({ source: (s) => `throw new Error("config server unreachable");\n${s}` });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.equal(out.stderr.trim(), "svc: Couldn't read manifest: config server unreachable");
  });

  it("a build error: Couldn't read manifest with the file and line", async () => {
    const dir = project({ source: (s) => replaceOnce(s, "export default", "export default (") });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.match(out.stderr, /^svc: Couldn't read manifest: .*index\.ts:\d+: /);
  });

  it("no trainer exported: the studio's panel text", async () => {
    const dir = project({ source: () => 'import { createSvc } from "svc-studio";\nexport default createSvc({});\n' });
    const out = svc(cloud, dir, ["start"]);
    assert.equal(out.status, 1);
    assert.equal(out.stderr.trim(), "svc: No trainer in src/svc/index.ts yet. Add createTrainer(...) and pass it to createSvc.");
    const manifest = svc(cloud, dir, ["manifest", "--json"]);
    assert.deepEqual(JSON.parse(manifest.stdout), { status: "none" });
  });
});

describe("svc start: cancelling and worker failure", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let dir: string;
  before(async () => {
    cloud = await startTestCloud({ workers: 1, env: { SVC_WORKER_GRACE_MS: "1500" } });
    dir = quickstartProject({ maxSteps: 5000, saveSteps: 0 });
  });
  after(async () => {
    await cloud.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("Ctrl-C cancels the job: the worker stops, the job is cancelled, exit 130", async () => {
    const run = await startUntilTraining(cloud, dir);
    run.child.kill("SIGINT");
    assert.equal(await run.exited, 130);
    assert.match(run.stderr(), /cancelling the job/);
    assert.equal(run.lines[run.lines.length - 1].replace(/^job \S+ /, ""), "cancelled");
    const client = await cliProjectClient(cloud, dir);
    const [job] = await client.listJobs();
    assert.equal(job.status, "cancelled");
  });

  it("a worker that dies marks its job failed with a readable error", async () => {
    const run = await startUntilTraining(cloud, dir);
    const workers = spawnSync("pgrep", ["-P", String(cloud.process.pid), "-f", "cli.mjs worker"], { encoding: "utf8" })
      .stdout.trim()
      .split("\n")
      .filter(Boolean);
    assert.equal(workers.length, 1, "the daemon runs one local worker");
    process.kill(Number(workers[0]), "SIGKILL");
    assert.equal(await run.exited, 1);
    const client = await cliProjectClient(cloud, dir);
    const [job] = await client.listJobs();
    assert.equal(job.status, "failed");
    assert.match(job.error ?? "", /^The worker "local-1" running this job stopped unexpectedly/);
    assert.ok(run.lines.some((l) => l.startsWith('The worker "local-1" running this job stopped unexpectedly')));
  });
});
