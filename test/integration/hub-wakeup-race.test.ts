import assert from "node:assert/strict";
import path from "node:path";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import { createJob } from "../../cloud/domain/jobs.js";
import { startCloud, type RunningCloud } from "../../cloud/serve.js";
import { pollUntil } from "../support/poll.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import { newAccount } from "../support/api.js";
import type { TestCloud } from "../support/cloud.js";
import { TestWorker } from "../support/worker.js";

/**
 * The queued-job wake-up race: `jobQueued()` arriving while an assignment pass runs was dropped
 * (`if (this.assigning) return`), so a job stored just after the pass looked for queued jobs sat
 * queued beside an idle worker until something else woke the hub. The real app runs in this
 * process (real SQLite, real worker protocol) so the test can order the three steps exactly: the
 * store serves queries one at a time in order, so the pass looks before the job is stored, and
 * the job's wake-up arrives while that pass is still running.
 */
describe("worker hub: a job queued during an assignment pass", function () {
  this.timeout(30_000);
  let tmp: TempDir;
  let cloud: RunningCloud;
  before(async () => {
    tmp = await createTempDir("hub-wakeup");
    cloud = await startCloud({ dataDir: path.join(tmp.path, "cloud"), port: 0, edgePort: 0 });
  });
  after(async () => {
    await cloud?.close();
    await tmp?.remove();
  });

  it("is handed to the idle worker", async () => {
    const asTestCloud = { cloudUrl: cloud.cloudUrl, dataDir: cloud.ctx.dataDir } as TestCloud;
    const alice = await newAccount(asTestCloud);
    const worker = await TestWorker.connect(asTestCloud, "w-idle");
    try {
      worker.send({ type: "ready" });
      await pollUntil(() => cloud.hub.idleWorkerCount() === 1, { timeoutMs: 10_000, description: "the worker to be idle" });

      void cloud.hub.jobQueued(); // a pass starts and looks for queued jobs: none yet
      const stored = createJob(cloud.ctx, { projectId: alice.projectId, name: "raced", config: {} });
      void cloud.hub.jobQueued(); // the job's wake-up, while that pass runs
      const job = await stored;

      const assign = await worker.next((m): m is Extract<CloudMessage, { type: "assign" }> => m.type === "assign", 10_000).catch(() => null);
      assert.ok(assign, `job ${job.id} sat queued beside an idle worker`);
      assert.equal(assign.job.id, job.id);
    } finally {
      worker.close();
    }
  });
});
