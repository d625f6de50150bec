import assert from "node:assert/strict";
import { sql } from "kysely";
import { startPgCluster, type PgCluster } from "../../../scripts/pg-cluster.mjs";
import type { CloudContext } from "../../../cloud/context.js";
import { JobEventBus } from "../../../cloud/domain/eventBus.js";
import { JobListChanges } from "../../../cloud/domain/jobListChanges.js";
import { appendJobEvents, claimNextJob, createJob, findJob, listJobEventsAfter, type EventToAppend } from "../../../cloud/domain/jobs.js";
import { JobListCache } from "../../../cloud/domain/jobListCache.js";
import { createMetrics } from "../../../cloud/metrics.js";
import { openStore, type StoreInfo } from "../../../cloud/store/db.js";
import type { JobEvent } from "../../../sdk/wire.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";

/**
 * Group commit of job events (the hub stores a link's backlog in one transaction) and the job
 * list kept in memory, on the real store: SQLite, and PostgreSQL in a cluster of its own.
 * - one refused event of a group is refused alone: the events after it are stored as if it had
 *   never been sent, and the log stays gap-free;
 * - a group whose transaction fails stores nothing, moves no job and tells no live reader
 *   anything, so the hub, which acknowledges only after `appendJobEvents` resolves, has
 *   acknowledged nothing that is not durable (the store failure is a real one: a trigger that
 *   raises, standing for a full disk);
 * - the kept job list follows every change a job shows, including changes made through another
 *   connection (another cloud instance).
 */
for (const dialect of ["sqlite", "postgres"] as const) {
  describe(`job events in groups, and the kept job list (${dialect})`, function () {
    this.timeout(120_000);
    let tmp: TempDir;
    let cluster: PgCluster | undefined;
    let store: StoreInfo;
    let ctx: CloudContext;
    let published: { jobId: string; event: JobEvent }[];

    before(async () => {
      tmp = await createTempDir(`job-group-${dialect}`);
      if (dialect === "postgres") cluster = await startPgCluster();
      store = await openStore({ dataDir: tmp.path, databaseUrl: cluster?.url });
      const events = new JobEventBus();
      ctx = { db: store.db, dialect: store.dialect, metrics: createMetrics(), events, jobListChanges: new JobListChanges() } as unknown as CloudContext;
      await ctx.db.insertInto("orgs").values({ id: "o", slug: "o", name: "o", created_at: "2026-01-01" }).execute();
      await ctx.db.insertInto("projects").values({ id: "p", org_id: "o", slug: "p", name: "p", created_at: "2026-01-01" }).execute();
    });
    after(async () => {
      await store?.close();
      await cluster?.stop();
      await tmp?.remove();
    });

    /** A fresh queued job claimed by a worker, with every event the bus publishes for it recorded. */
    async function claimedJob(name: string) {
      const job = await createJob(ctx, { projectId: "p", name, config: {} });
      const claimed = (await claimNextJob(ctx, `w-${name}`))!;
      assert.equal(claimed.id, job.id);
      published = [];
      ctx.events.subscribe(job.id, (event) => published.push({ jobId: job.id, event: event! }));
      const worker = (seq: number, type: EventToAppend["type"], data: Record<string, unknown> = {}, claim = claimed.claim): EventToAppend => ({
        jobId: job.id,
        type,
        data: { ...data, wseq: seq },
        origin: { kind: "worker", claim, seq },
      });
      return { job, claim: claimed.claim, worker };
    }

    it("refuses a stale, gapped or late event alone and stores the rest of its group in order", async () => {
      const { job, claim, worker } = await claimedJob("mixed");
      const outcomes = await appendJobEvents(ctx, [
        worker(1, "training.started"),
        worker(2, "training.log", { step: 1 }),
        worker(3, "training.log", { step: 2 }, claim - 1), // a stale claim
        worker(5, "training.log", { step: 4 }), // a gap
        worker(3, "training.log", { step: 2 }),
        worker(2, "training.log", { step: 1 }), // a resend
        worker(4, "training.completed", { artifacts: 2 }),
        worker(5, "training.log", { step: 5 }), // after the end
      ]);
      assert.deepEqual(
        outcomes.map((o) => (o.kind === "refused" ? o.error.code : o.kind)),
        ["stored", "stored", "stale_claim", "sequence_gap", "stored", "duplicate", "stored", "job_ended"],
      );
      const stored = await listJobEventsAfter(ctx, job.id, 0);
      assert.deepEqual(
        stored.map((e) => [e.seq, e.type, e.data.wseq]),
        [
          [1, "training.started", 1],
          [2, "training.log", 2],
          [3, "training.log", 3],
          [4, "training.completed", 4],
        ],
      );
      const row = (await findJob(ctx, job.id))!;
      assert.equal(row.status, "completed");
      assert.equal(Number(row.last_seq), 4);
      assert.equal(Number(row.worker_seq), 4);
      assert.equal(Number(row.artifact_count), 2);
      // Live readers hear of each stored event once, in order, and of nothing else.
      assert.deepEqual(
        published.map((p) => p.event.seq),
        [1, 2, 3, 4],
      );
    });

    it("stores nothing of a group whose transaction fails, and a resend after the failure stores it all once", async () => {
      const { job, worker } = await claimedJob("fault");
      await appendJobEvents(ctx, [worker(1, "training.started")]);
      published = [];
      await installPoison(ctx, dialect);
      try {
        await assert.rejects(
          appendJobEvents(ctx, [
            worker(2, "training.log", { step: 1 }),
            worker(3, "training.log", { poison: true }),
            worker(4, "training.completed", { artifacts: 0 }),
          ]),
          /poisoned event \(test fault\)/,
        );
      } finally {
        await removePoison(ctx, dialect);
      }
      assert.deepEqual(
        (await listJobEventsAfter(ctx, job.id, 0)).map((e) => e.seq),
        [1],
        "an event of the failed group was stored",
      );
      const row = (await findJob(ctx, job.id))!;
      assert.equal(row.status, "running");
      assert.equal(Number(row.last_seq), 1);
      assert.equal(Number(row.worker_seq), 1);
      assert.equal(published.length, 0, "a live reader heard of an event that was rolled back");

      // The worker keeps unacknowledged events and resends them all after reconnecting.
      const again = await appendJobEvents(ctx, [
        worker(2, "training.log", { step: 1 }),
        worker(3, "training.log", { poison: true }),
        worker(4, "training.completed", { artifacts: 0 }),
      ]);
      assert.deepEqual(
        again.map((o) => o.kind),
        ["stored", "stored", "stored"],
      );
      assert.deepEqual(
        (await listJobEventsAfter(ctx, job.id, 0)).map((e) => e.seq),
        [1, 2, 3, 4],
      );
      assert.deepEqual(
        published.map((p) => p.event.seq),
        [2, 3, 4],
      );
    });

    it("keeps the job list while nothing changed and follows every change, also one made through another connection", async () => {
      const cache = new JobListCache();
      const list = async () => JSON.parse((await cache.body(ctx, "p")).body.toString("utf8")) as { id: string; status: string; artifactCount: number }[];
      const before = await list();
      const firstVersion = (await cache.body(ctx, "p")).version;
      assert.equal((await cache.body(ctx, "p")).body, (await cache.body(ctx, "p")).body, "an unchanged list was built again");
      // Watchers of the list (GET /v1/jobs/watch) are told each committed version, with the change.
      const announced: (number | undefined)[] = [];
      const unsubscribe = ctx.jobListChanges.subscribe("p", (version) => announced.push(version));

      const { job, worker } = await claimedJob("listed");
      let listed = await list();
      assert.equal(listed.length, before.length + 1);
      assert.deepEqual([listed[0].id, listed[0].status], [job.id, "queued"], "a new job is first (newest first)");

      await appendJobEvents(ctx, [worker(1, "training.started")]);
      assert.equal((await list())[0].status, "running");
      await appendJobEvents(ctx, [worker(2, "training.log", { step: 1 })]);
      assert.equal((await cache.body(ctx, "p")).body, (await cache.body(ctx, "p")).body, "a log event does not change the list");

      // Another cloud instance (its own connection to the same store) finishes the job.
      const other = await openStore({ dataDir: tmp.path, databaseUrl: cluster?.url });
      try {
        const otherCtx = { ...ctx, db: other.db } as CloudContext;
        await appendJobEvents(otherCtx, [worker(3, "training.completed", { artifacts: 3 })]);
      } finally {
        await other.close();
      }
      listed = await list();
      assert.deepEqual([listed[0].status, listed[0].artifactCount], ["completed", 3]);
      // Created, started, completed: three changes, each a new version (the list's entity tag).
      assert.equal((await cache.body(ctx, "p")).version, firstVersion + 3);
      assert.equal(listed.length, before.length + 1);
      assert.deepEqual(announced, [firstVersion + 1, firstVersion + 2, firstVersion + 3]);
      unsubscribe();
    });
  });
}

/** A real store failure for one event: a trigger that raises when an event's data says `poison`. */
async function installPoison(ctx: CloudContext, dialect: "sqlite" | "postgres"): Promise<void> {
  if (dialect === "sqlite") {
    await sql`create trigger poison before insert on job_events when new.data like '%poison%' begin select raise(abort, 'poisoned event (test fault)'); end`.execute(
      ctx.db,
    );
    return;
  }
  await sql`create function poison() returns trigger language plpgsql as $$ begin if new.data like '%poison%' then raise exception 'poisoned event (test fault)'; end if; return new; end $$`.execute(
    ctx.db,
  );
  await sql`create trigger poison before insert on job_events for each row execute function poison()`.execute(ctx.db);
}

async function removePoison(ctx: CloudContext, dialect: "sqlite" | "postgres"): Promise<void> {
  if (dialect === "sqlite") {
    await sql`drop trigger poison`.execute(ctx.db);
    return;
  }
  await sql`drop trigger poison on job_events`.execute(ctx.db);
  await sql`drop function poison()`.execute(ctx.db);
}
