/**
 * Deleting a job (DELETE /v1/jobs/:id) and the retention of finished jobs, on a real cloud: the
 * job's events, artifacts (rows and files) and the datasets no other job uses go; a live job and a
 * deployed one are refused with 409; the disk a job uses is in its GET answer.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConflictError, NotFoundError } from "../../sdk/errors.js";
import { parseRetention } from "../../cloud/domain/jobRetention.js";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";
import { http, newAccount, type Account } from "../support/api.js";
import { withStore } from "../support/store.js";
import { assignedJob, uploadArtifact } from "../support/worker.js";
import { pollUntil } from "../support/poll.js";

const line = (text: string) =>
  JSON.stringify({
    messages: [
      { role: "user", content: text },
      { role: "assistant", content: `${text}!` },
    ],
  }) + "\n";

/** A job trained by a test worker through the real worker link: one dataset, one uploaded adapter, completed. */
async function trainedJob(cloud: TestCloud, account: Account, name: string, jsonl: string, adapterBytes = 1000) {
  const dataset = await account.client.uploadDataset(`${name}.jsonl`, jsonl);
  const { job, worker, assign } = await assignedJob(cloud, account.client, { name, datasetId: dataset.id }, { started: true });
  try {
    const upload = await uploadArtifact(cloud, assign, { name: "adapter.gguf", kind: "adapter", step: "1" }, Buffer.alloc(adapterBytes, 7));
    assert.equal(upload.status, 201, await upload.text());
    await worker.emit(job.id, 2, "training.completed", { artifacts: 1 });
  } finally {
    worker.close();
  }
  return { job, dataset };
}

const datasetFile = (cloud: TestCloud, id: string) => path.join(cloud.dataDir, "datasets", `${id}.jsonl`);
const artifactDir = (cloud: TestCloud, jobId: string) => path.join(cloud.dataDir, "artifacts", jobId);

async function rowCounts(cloud: TestCloud, jobId: string, datasetId: string) {
  return withStore(cloud, async (db) => ({
    jobs: (await db.selectFrom("jobs").select("id").where("id", "=", jobId).execute()).length,
    events: (await db.selectFrom("job_events").select("seq").where("job_id", "=", jobId).execute()).length,
    artifacts: (await db.selectFrom("artifacts").select("id").where("job_id", "=", jobId).execute()).length,
    datasets: (await db.selectFrom("datasets").select("id").where("id", "=", datasetId).execute()).length,
  }));
}

describe("cloud API: deleting jobs", () => {
  let cloud: TestCloud;
  let alice: Account;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
  });
  after(async () => cloud.dispose());

  it("shows the disk a job uses, and deletes its events, artifacts and dataset", async () => {
    const jsonl = line("only-mine") + line("two");
    const { job, dataset } = await trainedJob(cloud, alice, "solo", jsonl, 1234);
    const shown = await alice.client.getJob(job.id);
    assert.equal(shown.diskBytes, 1234 + Buffer.byteLength(jsonl));
    assert.deepEqual(await rowCounts(cloud, job.id, dataset.id), { jobs: 1, events: 2, artifacts: 1, datasets: 1 });
    assert.ok(existsSync(path.join(artifactDir(cloud, job.id), "adapter.gguf")));

    await alice.client.deleteJob(job.id);

    await assert.rejects(alice.client.getJob(job.id), NotFoundError);
    assert.equal((await http(cloud, "GET", `/v1/jobs/${job.id}/events`, { token: alice.token })).status, 404);
    assert.ok(!(await alice.client.listJobs()).some((j) => j.id === job.id), "the job list no longer has it");
    assert.deepEqual(await rowCounts(cloud, job.id, dataset.id), { jobs: 0, events: 0, artifacts: 0, datasets: 0 });
    assert.equal(existsSync(artifactDir(cloud, job.id)), false, "the artifact files are gone");
    assert.equal(existsSync(datasetFile(cloud, dataset.id)), false, "the dataset file is gone");
    // Deleting again: the job is gone, like any unknown job.
    assert.equal((await http(cloud, "DELETE", `/v1/jobs/${job.id}?projectId=${alice.projectId}`, { token: alice.token })).status, 404);
  });

  it("keeps a dataset another job still uses, and deletes it with the last job", async () => {
    const jsonl = line("shared-a") + line("shared-b");
    const first = await trainedJob(cloud, alice, "share-1", jsonl);
    const second = await trainedJob(cloud, alice, "share-2", jsonl);
    assert.equal(second.dataset.id, first.dataset.id, "the same content is one dataset");

    await alice.client.deleteJob(first.job.id);
    assert.ok(existsSync(datasetFile(cloud, first.dataset.id)), "the second job's dataset stays");
    assert.equal((await rowCounts(cloud, second.job.id, second.dataset.id)).datasets, 1);
    assert.ok(existsSync(artifactDir(cloud, second.job.id)), "the other job's artifacts stay");

    await alice.client.deleteJob(second.job.id);
    assert.equal(existsSync(datasetFile(cloud, first.dataset.id)), false);
    assert.equal((await rowCounts(cloud, second.job.id, second.dataset.id)).datasets, 0);
  });

  it("refuses a queued job with 409 until it is cancelled", async () => {
    const job = await alice.client.createJob({ name: "waiting", config: { maxSteps: 1 } });
    await assert.rejects(alice.client.deleteJob(job.id), (err: unknown) => {
      assert.ok(err instanceof ConflictError);
      assert.equal(err.code, "job_active");
      assert.equal(err.message, `job ${job.id} is queued; cancel it first (svc jobs cancel ${job.id}), then delete it`);
      return true;
    });
    assert.equal((await alice.client.getJob(job.id)).status, "queued");
    await alice.client.cancelJob(job.id);
    await alice.client.deleteJob(job.id);
    await assert.rejects(alice.client.getJob(job.id), NotFoundError);
  });

  it("refuses a job a deployment serves with 409 naming the deployment", async () => {
    const { job } = await trainedJob(cloud, alice, "served", line("served"));
    const deployment = await alice.client.createDeployment({ slug: "keeps-job-alive", target: { kind: "adapter", jobId: job.id }, authMode: "none" });
    await assert.rejects(alice.client.deleteJob(job.id), (err: unknown) => {
      assert.ok(err instanceof ConflictError);
      assert.equal(err.code, "job_deployed");
      assert.match(err.message, /is served by deployment "keeps-job-alive"; delete it or point it at another target/);
      return true;
    });
    assert.equal((await alice.client.getJob(job.id)).status, "completed");
    // A deleted deployment keeps its row, but serves nothing: the job may go then.
    await alice.client.deleteDeployment(deployment.id);
    await alice.client.deleteJob(job.id);
    await assert.rejects(alice.client.getJob(job.id), NotFoundError);
  });

  it("answers 404 for another project's job and deletes nothing", async () => {
    const { job } = await trainedJob(cloud, alice, "not-bobs", line("not-bobs"));
    const bob = await newAccount(cloud);
    const res = await http(cloud, "DELETE", `/v1/jobs/${job.id}`, { token: bob.token });
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, "not_found");
    assert.equal((await alice.client.getJob(job.id)).status, "completed");
  });
});

describe("cloud: retention of finished jobs", () => {
  it("parses durations and refuses what is not one", () => {
    assert.equal(parseRetention("30d"), 30 * 86_400_000);
    assert.equal(parseRetention("12h"), 12 * 3_600_000);
    assert.equal(parseRetention("2w"), 14 * 86_400_000);
    for (const bad of ["", "30", "0d", "-1d", "3y", "1.5d"]) assert.throws(() => parseRetention(bad), /is not a duration/);
  });

  it("svc cloud serve refuses a retention that is not a duration, before starting", () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "svc-retain-"));
    try {
      const run = spawnSync(
        process.execPath,
        [cliPath, "cloud", "serve", "--port", "0", "--edge-port", "0", "--data", path.join(home, "cloud"), "--retain-jobs", "3y"],
        {
          encoding: "utf8",
          env: { ...process.env, SVC_HOME: home },
        },
      );
      assert.equal(run.status, 2);
      assert.equal(run.stderr, 'svc: --retain-jobs: job retention "3y" is not a duration: write a positive number and a unit, m, h, d or w (e.g. 30d)\n');
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("deletes finished jobs that ended before the retention, keeping recent, live and deployed ones", async () => {
    const first = await startTestCloud();
    let cloud = first;
    try {
      const account = await newAccount(cloud);
      const old = await trainedJob(cloud, account, "old", line("old"));
      const oldDeployed = await trainedJob(cloud, account, "old-deployed", line("old-deployed"));
      await account.client.createDeployment({ slug: "old-but-served", target: { kind: "adapter", jobId: oldDeployed.job.id }, authMode: "none" });
      const recent = await account.client.createJob({ name: "recent", config: { maxSteps: 1 } });
      await account.client.cancelJob(recent.id);
      const queued = await account.client.createJob({ name: "queued-long-ago", config: { maxSteps: 1 } });
      // The clock is the store's: these jobs were created and ended three days ago.
      const threeDaysAgo = new Date(Date.now() - 3 * 86_400_000).toISOString();
      await withStore(cloud, (db) =>
        db.updateTable("jobs").set({ created_at: threeDaysAgo, finished_at: threeDaysAgo }).where("id", "in", [old.job.id, oldDeployed.job.id]).execute(),
      );
      await withStore(cloud, (db) => db.updateTable("jobs").set({ created_at: threeDaysAgo }).where("id", "=", queued.id).execute());

      // Started with a retention of two days, the cloud sweeps at once.
      await cloud.stop();
      cloud = await cloud.restart({ args: ["--retain-jobs", "2d"] });
      // The rows go first, the files once they are gone: wait for both.
      await pollUntil(
        async () =>
          (await http(cloud, "GET", `/v1/jobs/${old.job.id}?projectId=${account.projectId}`, { token: account.token })).status === 404 &&
          !existsSync(artifactDir(cloud, old.job.id)) &&
          !existsSync(datasetFile(cloud, old.dataset.id)),
        { timeoutMs: 20_000, description: "the expired job, its artifacts and its dataset to be deleted" },
      );
      const left = await http(cloud, "GET", `/v1/jobs?projectId=${account.projectId}`, { token: account.token });
      assert.deepEqual((left.body as { name: string }[]).map((j) => j.name).sort(), ["old-deployed", "queued-long-ago", "recent"]);
    } finally {
      await cloud.dispose();
      await first.dispose();
    }
  });
});

describe("svc jobs delete", function () {
  let cloud: TestCloud;
  let alice: Account;
  let home: string;
  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
    home = mkdtempSync(path.join(os.tmpdir(), "svc-jobs-cli-"));
    writeFileSync(path.join(home, "credentials.json"), JSON.stringify({ kind: "anonymous", cloudUrl: cloud.cloudUrl, token: alice.token }), { mode: 0o600 });
  });
  after(async () => {
    await cloud.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  /** The real CLI, in a folder with no project: the job is found by id among the user's projects. */
  const svc = (args: string[], input = "") =>
    spawnSync(process.execPath, [cliPath, "jobs", ...args], {
      encoding: "utf8",
      cwd: home,
      input,
      env: { ...process.env, SVC_HOME: home, SVC_CLOUD_URL: cloud.cloudUrl },
    });

  it("asks first: no (or no answer) keeps the job, yes deletes it", async () => {
    const { job } = await trainedJob(cloud, alice, "cli-asked", line("cli-asked"), 2048);
    const declined = svc(["delete", job.id], "n\n");
    assert.equal(declined.status, 1, declined.stderr);
    assert.match(
      declined.stdout,
      new RegExp(
        `^Delete job "cli-asked" \\(${job.id}, completed\\) with its events, 1 artifact and the datasets no other job uses \\(2\\.\\d+ KB on disk\\)\\? This cannot be undone\\. \\[y/N\\] not deleted\\n$`,
      ),
    );
    const unanswered = svc(["delete", job.id], "");
    assert.equal(unanswered.status, 1);
    assert.equal((await alice.client.getJob(job.id)).status, "completed");

    const accepted = svc(["delete", job.id], "y\n");
    assert.equal(accepted.status, 0, accepted.stderr);
    assert.match(accepted.stdout, new RegExp(`deleted job ${job.id} \\(cli-asked\\), freed up to 2\\.\\d+ KB\\n$`));
    await assert.rejects(alice.client.getJob(job.id), NotFoundError);
  });

  it("--yes deletes without asking; a running job is refused with the cloud's message", async () => {
    const { job } = await trainedJob(cloud, alice, "cli-yes", line("cli-yes"));
    const deleted = svc(["delete", job.id, "--yes"]);
    assert.equal(deleted.status, 0, deleted.stderr);
    assert.doesNotMatch(deleted.stdout, /\[y\/N\]/);
    await assert.rejects(alice.client.getJob(job.id), NotFoundError);

    const queued = await alice.client.createJob({ name: "cli-queued", config: { maxSteps: 1 } });
    const refused = svc(["delete", queued.id, "--yes"]);
    assert.equal(refused.status, 1);
    assert.equal(refused.stderr, `svc: job ${queued.id} is queued; cancel it first (svc jobs cancel ${queued.id}), then delete it\n`);
    const cancelled = svc(["cancel", queued.id]);
    assert.equal(cancelled.status, 0, cancelled.stderr);
    assert.equal(svc(["delete", queued.id, "--yes"]).status, 0);
  });
});
