/**
 * The cloud's side of samples (issue 27), against a real cloud and store (SQLite, or PostgreSQL
 * under SVC_TEST_DATABASE_URL): a worker's `samples.graded` events become `GET
 * /v1/jobs/:id/samples` by step (a step answered again replaces its row), custom grades posted by
 * the trainer's process merge in even after the job ended, only for the job's custom graders, and
 * a deleted job takes its samples with it. The worker side is the protocol spoken by the test.
 */
import assert from "node:assert/strict";
import type { JobConfig } from "../../sdk/wire.js";
import { http, newAccount, type Account } from "../support/api.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { assignedJob } from "../support/worker.js";

const samplesAt = (step: number, answers: string[], valid: boolean[]) => ({
  step,
  graders: ["json_valid", "polite"],
  samples: answers.map((answer, i) => ({ prompt: `q${i}`, reference: '{"answer": "a"}', answer, grades: { json_valid: valid[i], polite: null } })),
  passRate: valid.filter(Boolean).length / valid.length,
  seconds: 0.5,
});

describe("cloud: job samples stored by step, custom grades merged in", () => {
  let cloud: TestCloud;
  let alice: Account;
  let bob: Account;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
    bob = await newAccount(cloud);
  });
  after(async () => cloud?.dispose());

  it("serves each step's samples, takes custom grades after the job ended, and deletes them with the job", async () => {
    const config = { maxSteps: 2, graders: [{ type: "json_valid" }, { type: "custom", name: "polite" }] } satisfies JobConfig;
    const { job, worker } = await assignedJob(cloud, alice.client, { name: "sampled", config });
    await worker.emit(job.id, 1, "training.started", { model: "svc-tiny" });
    await worker.emit(job.id, 2, "samples.graded", samplesAt(0, ["no", "no"], [false, false]));
    await worker.emit(job.id, 3, "samples.graded", samplesAt(2, ["{}", "no"], [true, false]));
    // A step answered again (a job claimed again answers its steps again) replaces the row.
    await worker.emit(job.id, 4, "samples.graded", samplesAt(2, ["{}", "{}"], [true, true]));
    await worker.emit(job.id, 5, "training.completed", { artifacts: 1 });
    worker.close();

    const { checkpoints } = await alice.client.listJobSamples(job.id);
    assert.deepEqual(
      checkpoints.map((c) => [c.step, c.passRate, c.samples.map((s) => s.answer)]),
      [
        [0, 0, ["no", "no"]],
        [2, 1, ["{}", "{}"]],
      ],
    );
    assert.equal((await http(cloud, "GET", `/v1/jobs/${job.id}/samples`, { token: bob.token })).status, 404, "another project's job");

    const graded = await alice.client.gradeJobSamples(job.id, 2, { polite: [true, false] });
    assert.deepEqual(
      graded.samples.map((s) => s.grades),
      [
        { json_valid: true, polite: true },
        { json_valid: true, polite: false },
      ],
    );
    assert.equal(graded.passRate, 0.5, "a custom grade counts in the pass rate");
    assert.equal((await alice.client.listJobSamples(job.id)).checkpoints[1].passRate, 0.5);
    const builtIn = await http(cloud, "POST", `/v1/jobs/${job.id}/samples/2/grades`, { token: alice.token, body: { grades: { json_valid: [false, false] } } });
    assert.equal(builtIn.status, 400);
    assert.equal(builtIn.body.error.message, 'grades: "json_valid" is not a custom grader of this job');
    const missing = await http(cloud, "POST", `/v1/jobs/${job.id}/samples/1/grades`, { token: alice.token, body: { grades: { polite: [true, true] } } });
    assert.equal(missing.status, 404);

    await alice.client.deleteJob(job.id);
    const gone = await http(cloud, "GET", `/v1/jobs/${job.id}/samples`, { token: alice.token });
    assert.equal(gone.status, 404);
  });
});
