/**
 * Samples and graders end to end: `svc start` of the quickstart (its taught data, so it really
 * learns) trains through the real cloud and worker; `GET /v1/jobs/:id/samples` then has the base
 * model's answers as checkpoint 0 and each checkpoint's, graded by the trainer's built-in graders
 * (on the worker) and by a custom function of the trainer (run by `svc start`, which posts its
 * grades), with a pass rate that rises. Once on tfjs, once on torch.
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { CloudClient } from "../../sdk/client.js";
import type { SampleCheckpoint } from "../../sdk/wire.js";
import { requireTorchStack } from "../support/torchStack.js";
import { replaceOnce } from "../support/text.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { cliProjectClient, quickstartData, quickstartProject, runSvc } from "../support/quickstart.js";

/** The quickstart with one more grader, a function of the trainer: does the answer start with "{"? */
function quickstartWithCustomGrader(): string {
  const dir = quickstartProject();
  const source = path.join(dir, "src/svc/index.ts");
  writeFileSync(
    source,
    replaceOnce(
      readFileSync(source, "utf8"),
      '  graders: ["json_valid", ',
      '  graders: [{ name: "opens-brace", grade: ({ answer }) => answer.trimStart().startsWith("{") }, "json_valid", ',
    ),
  );
  return dir;
}

async function samplesOf(cloud: TestCloud, dir: string): Promise<{ client: CloudClient; jobId: string; checkpoints: SampleCheckpoint[] }> {
  const client = await cliProjectClient(cloud, dir);
  const [job] = await client.listJobs();
  assert.equal(job.status, "completed");
  return { client, jobId: job.id, checkpoints: (await client.listJobSamples(job.id)).checkpoints };
}

function assertLearnedSamples(checkpoints: SampleCheckpoint[]): void {
  assert.deepEqual(
    checkpoints.map((c) => c.step),
    [0, 20, 40, 60],
  );
  const evalRows = quickstartData("eval.jsonl")
    .trim()
    .split("\n")
    .slice(0, 8)
    .map((l) => JSON.parse(l));
  for (const checkpoint of checkpoints) {
    assert.deepEqual(checkpoint.graders, ["opens-brace", "json_valid", "json_schema"]);
    assert.equal(checkpoint.samples.length, 8, "the default N");
    checkpoint.samples.forEach((sample, i) => {
      assert.equal(sample.prompt, evalRows[i].messages[0].content);
      assert.equal(sample.reference, evalRows[i].messages.at(-1).content, "the reference is the eval row's last assistant message");
      assert.equal(sample.grades["opens-brace"], sample.answer.trimStart().startsWith("{"), `custom grade at step ${checkpoint.step}: ${sample.answer}`);
      let valid = true;
      try {
        JSON.parse(sample.answer);
      } catch {
        valid = false;
      }
      assert.equal(sample.grades.json_valid, valid, sample.answer);
    });
    const passing = checkpoint.samples.filter((s) => Object.values(s.grades).every((g) => g === true)).length;
    assert.equal(checkpoint.passRate, passing / 8);
  }
  const rates = checkpoints.map((c) => c.passRate ?? -1);
  assert.equal(rates[0], 0, "the base model answers in sentences, not JSON");
  assert.ok(rates[3] >= 0.75 && rates[3] > rates[1], `pass rate rises: ${rates.join(" → ")}`);
}

function svcStart(cloud: TestCloud, dir: string) {
  const run = runSvc(cloud, dir, ["start"], {}, 400_000);
  assert.equal(run.status, 0, run.stderr + run.stdout);
  return run;
}

for (const backend of ["tfjs", "torch"] as const) {
  describe(`samples and graders: the quickstart's pass rate rises across checkpoints (${backend})`, function () {
    this.timeout(480_000);
    let cloud: TestCloud;
    let dir: string;
    before(async function () {
      if (backend === "torch") await requireTorchStack(this);
      cloud = await startTestCloud({ workers: 1, env: { SVC_TRAIN_BACKEND: backend } });
      dir = quickstartWithCustomGrader();
    });
    after(async () => {
      await cloud?.dispose();
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    it("GET samples: checkpoint 0 and each checkpoint, graded by the worker and by the trainer's own function", async () => {
      const run = svcStart(cloud, dir);
      assert.match(run.stdout, /^samples at step 0: 8 answered, 0% pass$/m);
      const { client, jobId, checkpoints } = await samplesOf(cloud, dir);
      assertLearnedSamples(checkpoints);
      if (backend === "torch") return;
      // Only a custom grader of the job takes posted grades, one per sample.
      await assert.rejects(client.gradeJobSamples(jobId, 20, { json_valid: Array(8).fill(true) }), /"json_valid" is not a custom grader of this job/);
      await assert.rejects(client.gradeJobSamples(jobId, 20, { "opens-brace": [true] }), /has 1 grades for 8 samples/);
      await assert.rejects(client.gradeJobSamples(jobId, 7, { "opens-brace": Array(8).fill(true) }), /samples at step 7 of job .* not found/);
      const regraded = await client.gradeJobSamples(jobId, 0, { "opens-brace": Array(8).fill(false) });
      assert.equal(regraded.passRate, 0);
      assert.equal((await client.listJobSamples(jobId)).checkpoints[0].samples[0].grades["opens-brace"], false);
    });
  });
}
