/**
 * `svc start --dry-run` and `createTrainer({ dryRun: true })` against a real cloud: the report
 * (counts from svc-tiny's tokenizer, the plan, a measured estimate), bad lines by number, and
 * nothing uploaded: no project scope, no job, no dataset file in the cloud's data dir.
 */
import assert from "node:assert/strict";
import type { SpawnSyncReturns } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { CloudClient } from "../../sdk/client.js";
import { replaceOnce } from "../support/text.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { quickstartProject, runSvc } from "../support/quickstart.js";

interface JsonLine {
  event: string;
  data: Record<string, any>;
}

describe("svc start --dry-run: check and estimate, train nothing (real cloud)", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  let dir: string;
  const svc = (args: string[], env: Record<string, string> = {}): SpawnSyncReturns<string> => runSvc(cloud, dir, args, env, 120_000);
  const datasetFiles = () => (existsSync(path.join(cloud.dataDir, "datasets")) ? readdirSync(path.join(cloud.dataDir, "datasets")) : []);
  const client = () => new CloudClient({ baseUrl: cloud.cloudUrl, token: JSON.parse(readFileSync(path.join(cloud.home, "credentials.json"), "utf8")).token });

  before(async () => {
    // No worker: nothing could train here anyway, and the dry run times its steps in its own process.
    cloud = await startTestCloud();
  });
  after(async () => {
    await cloud?.dispose();
  });
  beforeEach(() => {
    dir = quickstartProject();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("--json: per-split counts with svc-tiny's tokenizer, the plan and a measured estimate; no project, job or dataset after it", async () => {
    const run = svc(["start", "--dry-run", "--json"], { SVC_TRAIN_BACKEND: "tfjs" });
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as JsonLine);
    assert.deepEqual(
      lines.map((l) => l.event),
      ["dryRun.started", "dryRun.split", "dryRun.split", "dryRun.plan", "dryRun.estimate", "dryRun.completed"],
    );
    assert.deepEqual(lines[0].data, {
      trainer: "quickstart-json-answers",
      model: "svc-tiny",
      tokenizer: "svc-tiny's byte tokenizer (1 token = 1 byte)",
      maxSeqLength: 160,
      contextLength: 160,
    });
    const [train, evalSplit] = [lines[1].data, lines[2].data];
    assert.deepEqual([train.split, train.file, train.conversations, train.errors], ["train", "data/train.jsonl", 137, []]);
    assert.deepEqual([evalSplit.split, evalSplit.conversations], ["eval", 20]);
    // svc-tiny counts one token per byte plus 5 template tokens per one-turn chat.
    const firstLine = JSON.parse(readFileSync(path.join(dir, "data", "train.jsonl"), "utf8").split("\n")[0]) as { messages: { content: string }[] };
    assert.ok(train.tokens >= 137 * 5 + Buffer.byteLength(firstLine.messages.map((m) => m.content).join("")), `tokens ${train.tokens}`);
    assert.ok(train.longest.tokens <= 160 && train.longest.line >= 1, JSON.stringify(train.longest));
    assert.deepEqual(
      { steps: lines[3].data.steps, batchSize: lines[3].data.batchSize, evaluations: lines[3].data.evaluations },
      { steps: 60, batchSize: 8, evaluations: 6 },
    );
    const estimate = lines[4].data;
    assert.equal(estimate.available, true, JSON.stringify(estimate));
    assert.equal(estimate.backend, "tfjs", "SVC_TRAIN_BACKEND picks the backend, as for a real run");
    assert.ok(estimate.seconds > 0 && estimate.secondsPerStep > 0, JSON.stringify(estimate));
    assert.deepEqual(lines[5].data, { ok: true });

    assert.equal(existsSync(path.join(dir, ".svc", "state.json")), false, "no project scope was created");
    const projects = await client().listProjects();
    for (const project of projects) assert.deepEqual(await client().withProject(project.id).listJobs(), [], `project ${project.slug} has no job`);
    assert.deepEqual(datasetFiles(), [], "no dataset reached the cloud");
    // The probe can see an upload: the same check after one fails.
    const project = await client().createProject({ name: "probe" });
    await client()
      .withProject(project.id)
      .uploadDataset("x.jsonl", readFileSync(path.join(dir, "data", "eval.jsonl")));
    assert.equal(datasetFiles().length, 1);
  });

  it("--preview: every length, the first rows and each problem by line, and no steps timed (the studio's Datasets view)", () => {
    const train = path.join(dir, "data", "train.jsonl");
    const lines = readFileSync(train, "utf8").trim().split("\n");
    writeFileSync(train, [lines[0], "{not json", ...lines.slice(1)].join("\n") + "\n");
    const run = svc(["start", "--dry-run", "--preview", "--json"]);
    assert.equal(run.status, 1, run.stderr);
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as JsonLine);
    const preview = events[1].data.preview;
    assert.equal(preview.lengths.length, 137, "one length per conversation");
    assert.equal(preview.rows.length, 20);
    assert.deepEqual(
      preview.rows.slice(0, 2).map((r: { line: number }) => r.line),
      [1, 3],
      "the file's own line numbers",
    );
    assert.deepEqual(preview.rows[0].messages, (JSON.parse(lines[0]) as { messages: unknown }).messages);
    assert.equal(preview.rows[0].tokens, preview.lengths[0]);
    assert.deepEqual(preview.issues, [{ line: 2, message: "not valid JSON" }]);
    assert.equal(events[4].data.reason, "a preview times no steps (svc start --dry-run does)");
    const refused = svc(["start", "--preview"]);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /--preview goes with --dry-run/);
  });

  it("createTrainer({ dryRun: true }) makes plain svc start a dry run, in readable lines", () => {
    const source = path.join(dir, "src", "svc", "index.ts");
    writeFileSync(source, replaceOnce(readFileSync(source, "utf8"), "  seed: 42,\n", "  seed: 42,\n  dryRun: true,\n"));
    const run = svc(["start"]);
    assert.equal(run.status, 0, run.stderr);
    const lines = run.stdout.trim().split("\n");
    assert.ok(lines.includes('dry run of "quickstart-json-answers" on svc-tiny: nothing was uploaded and no job was created'), run.stdout);
    assert.ok(
      lines.some((l) => /^train {2}data\/train\.jsonl: 137 conversations, [\d,]+ tokens \([\d,]+ trained\); longest \d+ tokens \(line \d+\) of 160$/.test(l)),
      run.stdout,
    );
    assert.ok(
      lines.some((l) => /^steps {2}60 at batch 8 /.test(l)),
      run.stdout,
    );
    assert.ok(
      lines.some((l) => /^time {3}about \d+ (s|min) on (torch|tfjs), /.test(l)),
      run.stdout,
    );
    assert.equal(lines.at(-1), "ok: svc start would upload these datasets and train");
    assert.doesNotMatch(run.stdout, /queued/);
  });

  it("reports bad lines by number and exits 1, still uploading nothing", () => {
    const train = path.join(dir, "data", "train.jsonl");
    const tooLong = JSON.stringify({
      messages: [
        { role: "user", content: "x".repeat(200) },
        { role: "assistant", content: "y" },
      ],
    });
    writeFileSync(train, `{not json\n${tooLong}\n${readFileSync(train, "utf8")}`);
    const before = datasetFiles();
    const run = svc(["start", "--dry-run"], { SVC_TRAIN_BACKEND: "tfjs" });
    assert.equal(run.status, 1, run.stderr);
    assert.match(run.stdout, /^ {7}line 1: not valid JSON$/m);
    assert.match(run.stdout, /^ {7}line 2: conversation is 206 tokens, longer than the model's context of 160 tokens \(1 token = 1 byte\)$/m);
    assert.match(run.stdout, /longest 206 tokens \(line 2\) of 160/);
    assert.match(run.stdout, /^not ok: fix the lines above before svc start$/m);
    assert.deepEqual(datasetFiles(), before);
  });

  it("an unknown model is the same one-line error as svc start's, exit 1", () => {
    const source = path.join(dir, "src", "svc", "index.ts");
    writeFileSync(source, replaceOnce(readFileSync(source, "utf8"), 'model: "svc-tiny"', 'model: "no-such-model"'));
    const run = svc(["start", "--dry-run"]);
    assert.equal(run.status, 1);
    assert.match(run.stderr, /^svc: model: "no-such-model" is not registered with the cloud; trainable models: svc-tiny\./m);
  });
});
