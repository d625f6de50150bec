import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { createJob } from "../../cloud/domain/jobs.js";
import { startCloud, type RunningCloud } from "../../cloud/serve.js";
import { runTrainerWorker } from "../../cloud/workers/trainerWorker.js";
import { pollUntil } from "../support/poll.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { newAccount } from "../support/api.js";
import type { TestCloud } from "../support/cloud.js";

/**
 * The worker checks a job's config by the rules the cloud applies at creation (sdk/trainer/config.ts jobConfigProblems),
 * so a job stored without them (before them, or by a store written to directly) fails at once naming every bad field,
 * not at the first one the trainer meets. The app runs in this process (real SQLite, the real worker over its link) so
 * the job can be stored past the API's check.
 */
describe("training worker: a stored job config the trainer would refuse", function () {
  this.timeout(60_000);
  let tmp: TempDir;
  let cloud: RunningCloud;
  let worker: { stop(): void } | undefined;
  before(async () => {
    tmp = await createTempDir("worker-config");
    cloud = await startCloud({ dataDir: path.join(tmp.path, "cloud"), port: 0, edgePort: 0 });
  });
  after(async () => {
    worker?.stop();
    await cloud?.close();
    await tmp?.remove();
  });

  it("fails the job with every bad field and its path", async () => {
    const asTestCloud = { cloudUrl: cloud.cloudUrl, dataDir: cloud.ctx.dataDir } as TestCloud;
    const alice = await newAccount(asTestCloud);
    const job = await createJob(cloud.ctx, {
      projectId: alice.projectId,
      name: "stored as it was",
      config: { model: "svc-tiny", maxSteps: -5, learningRate: "fast" },
    });
    const token = readFileSync(path.join(cloud.ctx.dataDir, "worker-token"), "utf8").trim();
    worker = await runTrainerWorker({ cloudUrl: cloud.cloudUrl, token, name: "w-config", workDir: path.join(tmp.path, "work"), log: () => {} });
    const ended = await pollUntil(
      async () => {
        const current = await alice.client.getJob(job.id);
        return current.status === "failed" ? current : undefined;
      },
      { timeoutMs: 30_000, description: "the job to fail" },
    );
    assert.equal(ended.error, "config.maxSteps: must be an integer from 1 to 1000000; config.learningRate: must be a number between 0 and 1");
  });
});
