import assert from "node:assert/strict";
import path from "node:path";
import Database from "better-sqlite3";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import type { JobEvent } from "../../sdk/wire.js";
import { startTestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";
import { assignedJob, TestWorker } from "../support/worker.js";

/**
 * The hub stores a link's events by group commit and acknowledges none before its transaction
 * committed. A real cloud process; the store failure is a real one (a trigger in the cloud's
 * SQLite file that raises for one event, standing for a full disk), so the whole group it is in
 * rolls back: no event of it may have been acknowledged, the link is dropped, and the worker's
 * resend after reconnecting stores every event once, in order. (kill -9 during a stream of
 * events: cloud-jobs.test.ts, "loses no acknowledged event".)
 */
type Ack = Extract<CloudMessage, { type: "ack" }>;

describe("worker link: group commit acknowledges only what is stored", function () {
  this.timeout(120_000);

  it("acknowledges nothing of a group that failed to store, and the resend stores it all once", async function () {
    // The fault is planted in the SQLite file; the PostgreSQL variant of the same fault is in
    // test/unit/cloud/job-event-group.test.ts.
    if (process.env.SVC_TEST_DATABASE_URL) this.skip();
    const cloud = await startTestCloud();
    try {
      const alice = await newAccount(cloud);
      const {
        job,
        worker,
        assign: { claim },
      } = await assignedJob(cloud, alice.client, { name: "group-fault" });
      assert.equal((await worker.emit(job.id, 1, "training.started", {})).type, "ack");

      const file = new Database(path.join(cloud.dataDir, "svc.db"));
      file.pragma("busy_timeout = 5000");
      file.exec(
        `create trigger poison before insert on job_events when new.data like '%poison%' begin select raise(abort, 'poisoned event (test fault)'); end`,
      );
      const closed = new Promise<number>((resolve) => worker.socket.once("close", (code) => resolve(code)));
      const EVENTS = 40;
      const POISON = 25;
      for (let seq = 2; seq <= EVENTS; seq++) {
        worker.send({
          type: "event",
          jobId: job.id,
          claim,
          seq,
          eventType: "training.log",
          data: seq === POISON ? { step: seq, poison: true } : { step: seq },
        });
      }
      assert.equal(await closed, 1011, "the cloud did not drop the link after failing to store");
      const acked = Math.max(...worker.messages.filter((m): m is Ack => m.type === "ack" && m.jobId === job.id).map((m) => m.seq));
      assert.ok(acked < POISON, `event ${acked} was acknowledged, but the group holding event ${POISON} was never stored`);
      const storedBefore = (await alice.client.getJob(job.id)).status;
      assert.equal(storedBefore, "running");
      file.exec("drop trigger poison");
      file.close();

      // The worker kept everything unacknowledged and resends it after reconnecting.
      const back = await TestWorker.connect(cloud, "w-group-fault", [job.id]);
      for (let seq = acked + 1; seq <= EVENTS; seq++) {
        back.send({ type: "event", jobId: job.id, claim, seq, eventType: "training.log", data: seq === POISON ? { step: seq, poison: true } : { step: seq } });
      }
      back.send({ type: "event", jobId: job.id, claim, seq: EVENTS + 1, eventType: "training.completed", data: { artifacts: 0 } });
      await back.next((m): m is Ack => m.type === "ack" && m.jobId === job.id && m.seq >= EVENTS + 1);
      back.close();

      const events: JobEvent[] = [];
      for await (const event of alice.client.jobEvents(job.id)) events.push(event);
      assert.deepEqual(
        events.map((e) => e.seq),
        Array.from({ length: EVENTS + 1 }, (_, i) => i + 1),
        "the log is not 1..n once each",
      );
      assert.deepEqual(
        events.slice(1, -1).map((e) => e.data.step),
        Array.from({ length: EVENTS - 1 }, (_, i) => i + 2),
      );
      assert.equal((await alice.client.getJob(job.id)).status, "completed");
    } finally {
      await cloud.dispose();
    }
  });
});
