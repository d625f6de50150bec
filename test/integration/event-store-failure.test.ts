import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import { WorkerLink } from "../../cloud/workers/link.js";
import type { JobEvent } from "../../sdk/wire.js";
import { pollUntil, withTimeout } from "../support/poll.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";

/**
 * One failed event write must not wedge a job. The story from the field: the disk filled up, the
 * cloud refused event 18, the worker dropped it, and every later event (the terminal one too) was
 * refused as a gap, so the job stayed `running` for good. Now the cloud drops the worker's link
 * without refusing the event, and the worker resends everything unacknowledged once it is back.
 *
 * Test double, named as such: the full disk is a SQLite trigger (`svc_test_disk_full`) that the
 * test installs in the real cloud's database from outside, failing every event insert with
 * SQLite's own "database or disk is full" message until the test removes it. Filling a real disk
 * needs root and a tmpfs; the cloud sees the same kind of failure: an error from its store.
 */
describe("a failed event store write (disk full) does not wedge a job", function () {
  this.timeout(60_000);
  let cloud: TestCloud;
  let link: WorkerLink | undefined;
  after(async () => {
    link?.close();
    await cloud?.dispose();
  });

  it("the worker resends the refused events once the store works again, and the job completes", async () => {
    cloud = await startTestCloud();
    const alice = await newAccount(cloud);
    const job = await alice.client.createJob({ name: "disk-full", config: { maxSteps: 1 } });
    const token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    const linkLog: string[] = [];
    let assigned!: (m: Extract<CloudMessage, { type: "assign" }>) => void;
    const assign = new Promise<Extract<CloudMessage, { type: "assign" }>>((resolve) => (assigned = resolve));
    link = new WorkerLink({
      cloudUrl: cloud.cloudUrl,
      token,
      workerId: "w-disk-full-1",
      name: "w-disk-full",
      holding: () => [job.id],
      log: (line) => linkLog.push(line),
      onMessage: (m) => {
        if (m.type === "assign" && m.job.id === job.id) assigned(m);
      },
    });
    await link.connect();
    link.ready();
    await withTimeout(assign, 10_000, "the job's assignment");
    await link.emit(job.id, "training.started", {});

    const db = new SQLite(path.join(cloud.dataDir, "svc.db"));
    try {
      db.exec(`CREATE TABLE svc_test_fault (x INTEGER);
               INSERT INTO svc_test_fault VALUES (1);
               CREATE TRIGGER svc_test_disk_full BEFORE INSERT ON job_events WHEN EXISTS (SELECT 1 FROM svc_test_fault)
               BEGIN SELECT RAISE(ABORT, 'database or disk is full'); END;`);
      const stored: Promise<void>[] = [];
      for (let step = 1; step <= 5; step++) stored.push(link.emit(job.id, "training.log", { step, loss: 3 - step / 10 }));
      stored.push(link.emit(job.id, "training.completed", { artifacts: 0, steps: 5 }));
      // The write failed at least once (the cloud says so, or before the fix the worker heard a refusal).
      await pollUntil(() => /could not store \d+ event\(s\) from worker w-disk-full/.test(cloud.stderr()) || linkLog.some((l) => /refused event 2/.test(l)), {
        timeoutMs: 10_000,
        description: "the first failed event write",
      });
      db.exec("DELETE FROM svc_test_fault;"); // space is free again
      await withTimeout(Promise.all(stored), 20_000, "acknowledgements of every event");
      db.exec("DROP TRIGGER svc_test_disk_full; DROP TABLE svc_test_fault;");
    } finally {
      db.close();
    }

    assert.equal((await alice.client.getJob(job.id)).status, "completed");
    const events: JobEvent[] = [];
    for await (const event of alice.client.jobEvents(job.id)) events.push(event);
    assert.deepEqual(
      events.map((e) => [e.seq, e.type]),
      [[1, "training.started"], ...[2, 3, 4, 5, 6].map((seq) => [seq, "training.log"]), [7, "training.completed"]],
    );
    assert.deepEqual(
      events.slice(1, 6).map((e) => e.data.step),
      [1, 2, 3, 4, 5],
    );
    assert.ok(!linkLog.some((l) => /refused event/.test(l)), `the cloud refused events:\n${linkLog.join("\n")}`);
  });
});
