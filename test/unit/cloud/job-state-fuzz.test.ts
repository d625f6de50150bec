import assert from "node:assert/strict";
import type { CloudContext } from "../../../cloud/context.js";
import { JobEventBus } from "../../../cloud/domain/eventBus.js";
import { JobListChanges } from "../../../cloud/domain/jobListChanges.js";
import { appendJobEvent, appendJobEvents, cancelJob, claimNextJob, CLOUD, createJob, findJob, listJobEventsAfter } from "../../../cloud/domain/jobs.js";
import { isTerminal, JobEndedError } from "../../../cloud/domain/jobState.js";
import { HttpError } from "../../../cloud/http/errors.js";
import { createMetrics } from "../../../cloud/metrics.js";
import { openStore } from "../../../cloud/store/db.js";
import type { JobEventType } from "../../../sdk/wire.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";

/**
 * Property test of the job state machine on the real store (SQLite in a temp dir): random
 * interleavings of worker events (in order, resent, with a gap, from a stale claim), cancels,
 * worker disconnects that end in the orphan failure, and store restarts, several at once. After
 * every step: no job left an end state, each job's events are one gap-free ordered sequence, no
 * worker event is stored twice, and the status agrees with the events. Worker events also arrive
 * in groups stored by one transaction (the hub's group commit), mixing stored, resent, gapped and
 * stale events, so a refusal inside a group is judged alone. Reproduce a failure with
 * SVC_FUZZ_SEED=<the printed seed>.
 */
const ROUNDS = 12;
const STEPS = 60;
/** How often each outcome happened over all rounds: the test checks the fuzz reached them all. */
const outcomes: Record<string, number> = {};
const count = (outcome: string) => (outcomes[outcome] = (outcomes[outcome] ?? 0) + 1);

/** mulberry32: small, seedable, good enough to pick operations. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What one worker knows of its claim of a job, as the real link keeps it. */
interface WorkerClaim {
  jobId: string;
  claim: number;
  /** Events sent so far (its own numbering from 1). */
  sent: { seq: number; type: JobEventType }[];
}

describe("job state machine: random interleavings keep the invariants", function () {
  this.timeout(120_000);
  let tmp: TempDir;
  before(async () => {
    tmp = await createTempDir("job-fuzz");
  });
  after(async () => tmp?.remove());

  it(`holds over ${ROUNDS} seeded rounds of ${STEPS} steps`, async () => {
    const firstSeed = Number(process.env.SVC_FUZZ_SEED) || Math.floor(Math.random() * 2 ** 31);
    for (let round = 0; round < ROUNDS; round++) {
      const seed = firstSeed + round;
      try {
        await runRound(seed, `${tmp.path}/round-${round}`);
      } catch (err) {
        (err as Error).message = `job state fuzz failed with SVC_FUZZ_SEED=${seed}: ${(err as Error).message}`;
        throw err;
      }
    }
    for (const outcome of ["stored", "grouped", "duplicate", "refused", "cancelled", "restart", "claimed"]) {
      assert.ok(outcomes[outcome] > 0, `the fuzz never produced "${outcome}": ${JSON.stringify(outcomes)}`);
    }
  });
});

async function runRound(seed: number, dataDir: string): Promise<void> {
  const random = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
  const { promises: fs } = await import("node:fs");
  await fs.mkdir(dataDir, { recursive: true });
  let store = await openStore({ dataDir });
  const ctx = {
    db: store.db,
    dialect: store.dialect,
    metrics: createMetrics(),
    events: new JobEventBus(),
    jobListChanges: new JobListChanges(),
  } as unknown as CloudContext;
  await ctx.db.insertInto("orgs").values({ id: "o", slug: "o", name: "o", created_at: "2026-01-01" }).execute();
  await ctx.db.insertInto("projects").values({ id: "p", org_id: "o", slug: "p", name: "p", created_at: "2026-01-01" }).execute();

  const jobIds: string[] = [];
  const claims: WorkerClaim[] = [];
  /** Status last seen per job: once terminal it must never change. */
  const seen = new Map<string, string>();

  const workerEvent = async (claim: WorkerClaim) => {
    const last = claim.sent.at(-1);
    const kind = random();
    if (kind < 0.15 && last) {
      // A resend after a reconnect: the cloud must not store it twice.
      const again = pick(claim.sent);
      return tryAppend(claim, again.seq, again.type);
    }
    const seq = (last?.seq ?? 0) + 1 + (kind < 0.2 ? 1 : 0); // now and then a gap, which must be refused
    const type: JobEventType = !last
      ? "training.started"
      : random() < 0.75
        ? "training.log"
        : pick(["training.completed", "training.failed", "training.cancelled"] as const);
    const stale = random() < 0.08;
    const result = await tryAppend(stale ? { ...claim, claim: claim.claim - 1 } : claim, seq, type);
    if (result === "stored" && !stale && seq === (last?.seq ?? 0) + 1) claim.sent.push({ seq, type });
    return result;
  };

  const tryAppend = async (claim: WorkerClaim, seq: number, type: JobEventType) => {
    try {
      const result = await appendJobEvent(ctx, claim.jobId, type, { by: "worker", claim: claim.claim, wseq: seq }, { kind: "worker", claim: claim.claim, seq });
      count(result.duplicate ? "duplicate" : "stored");
      return result.duplicate ? "duplicate" : "stored";
    } catch (err) {
      if (err instanceof HttpError && ["job_ended", "stale_claim", "sequence_gap", "invalid_transition"].includes(err.code))
        return count("refused") && "refused";
      throw err;
    }
  };

  /** Several events of one claim stored by one transaction, as the hub stores a link's backlog. */
  const workerGroup = async (claim: WorkerClaim) => {
    let planned = claim.sent.at(-1)?.seq ?? 0;
    const events = Array.from({ length: 2 + Math.floor(random() * 5) }, () => {
      const kind = random();
      if (kind < 0.1 && claim.sent.length) return { ...pick(claim.sent), stale: false };
      const seq = planned + 1 + (kind < 0.15 ? 1 : 0);
      const type: JobEventType =
        seq === 1 ? "training.started" : random() < 0.8 ? "training.log" : pick(["training.completed", "training.failed", "training.cancelled"] as const);
      const stale = random() < 0.08;
      if (!stale && seq === planned + 1) planned = seq;
      return { seq, type, stale };
    });
    const outcomes = await appendJobEvents(
      ctx,
      events.map(({ seq, type, stale }) => {
        const sentClaim = stale ? claim.claim - 1 : claim.claim;
        return { jobId: claim.jobId, type, data: { by: "worker", claim: sentClaim, wseq: seq }, origin: { kind: "worker" as const, claim: sentClaim, seq } };
      }),
    );
    outcomes.forEach((outcome, i) => {
      if (outcome.kind === "refused") {
        assert.ok(["job_ended", "stale_claim", "sequence_gap", "invalid_transition"].includes(outcome.error.code), outcome.error.message);
        return count("refused");
      }
      count(outcome.kind);
      if (outcome.kind === "stored") {
        count("grouped");
        claim.sent.push({ seq: events[i].seq, type: events[i].type });
      }
    });
  };

  const operations: Record<string, () => Promise<unknown>> = {
    create: async () => jobIds.push((await createJob(ctx, { projectId: "p", name: "fuzz", config: {} })).id),
    claim: async () => {
      const job = await claimNextJob(ctx, `w-${Math.floor(random() * 3)}`);
      if (job) claims.push({ jobId: job.id, claim: job.claim, sent: [] }) && count("claimed");
    },
    event: async () => (claims.length ? workerEvent(pick(claims)) : undefined),
    group: async () => (claims.length ? workerGroup(pick(claims)) : undefined),
    cancel: async () => jobIds.length && (await cancelJob(ctx, pick(jobIds))) && count("cancelled"),
    // The worker vanished and did not come back within the grace: the hub's orphan failure.
    orphan: async () => {
      if (!jobIds.length) return;
      await appendJobEvent(ctx, pick(jobIds), "training.failed", { by: "cloud", error: "worker gone" }, CLOUD).catch((err) => {
        if (!(err instanceof JobEndedError)) throw err;
      });
    },
  };
  const weighted = ["create", "claim", "claim", "event", "event", "event", "event", "group", "group", "cancel", "orphan"];

  for (let step = 0; step < STEPS; step++) {
    if (random() < 0.05) {
      // Restart: the store is closed and opened again on the same data dir.
      await store.close();
      store = await openStore({ dataDir });
      count("restart");
      (ctx as { db: unknown }).db = store.db;
    }
    // Up to three operations at once: their transactions interleave on the store.
    const batch = Array.from({ length: 1 + Math.floor(random() * 3) }, () => operations[pick(weighted)]);
    await Promise.all(batch.map((op) => op()));
    await checkInvariants(ctx, jobIds, seen);
  }
  await store.close();
}

async function checkInvariants(ctx: CloudContext, jobIds: string[], seen: Map<string, string>): Promise<void> {
  for (const jobId of jobIds) {
    const job = (await findJob(ctx, jobId))!;
    const before = seen.get(jobId);
    if (before && isTerminal(before)) assert.equal(job.status, before, `job ${jobId} left ${before} for ${job.status}`);
    seen.set(jobId, job.status);

    const events = await listJobEventsAfter(ctx, jobId, 0, 100_000);
    assert.deepEqual(
      events.map((e) => e.seq),
      Array.from({ length: events.length }, (_, i) => i + 1),
      `job ${jobId}: seqs are not 1..n`,
    );
    assert.equal(Number(job.last_seq), events.length, `job ${jobId}: last_seq disagrees with the log`);

    const workerKeys = events.filter((e) => e.data.by === "worker").map((e) => `${e.data.claim}/${e.data.wseq}`);
    assert.equal(new Set(workerKeys).size, workerKeys.length, `job ${jobId}: a worker event was stored twice: ${workerKeys.join(" ")}`);
    const ownSeqs = events.filter((e) => e.data.by === "worker" && e.data.claim === Number(job.claim)).map((e) => e.data.wseq);
    assert.deepEqual(
      ownSeqs,
      Array.from({ length: ownSeqs.length }, (_, i) => i + 1),
      `job ${jobId}: the worker's numbers are not stored in order`,
    );
    assert.ok(
      events.every((e) => e.data.by !== "worker" || e.data.claim === Number(job.claim)),
      `job ${jobId}: a stale claim's event was stored`,
    );

    const ends = events.filter((e) => ["training.completed", "training.failed", "training.cancelled"].includes(e.type));
    assert.ok(ends.length <= 1, `job ${jobId}: ${ends.length} end events`);
    if (ends.length) {
      assert.equal(events.at(-1), ends[0], `job ${jobId}: events after the end`);
      assert.equal(job.status, ends[0].type.slice("training.".length), `job ${jobId}: status disagrees with the end event`);
    } else {
      assert.ok(!isTerminal(job.status), `job ${jobId}: ${job.status} without an end event`);
      assert.equal(job.status, events.some((e) => e.type === "training.started") ? "running" : "queued");
    }
  }
}
