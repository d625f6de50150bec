/**
 * A claim is atomic with its send: a worker link that closes between the claim and the
 * assignment leaves no job behind. Worker A sends `ready` and its close frame in one TCP write,
 * so the cloud reads both at once: it claims the queued job for A and, by the time the claim
 * (and the model lookup) resolved, A's link is closing. The job must go back to the queue and
 * reach worker B, which connects afterwards. (It stayed `queued` with A's worker_id, never
 * claimed again.) If the cloud ever reads the close after the assignment went out, the job
 * reaches B through the other path this covers: a worker that left before starting its job gives it
 * back when the grace runs out (it was failed), which the second test checks on its own, up to the
 * limit after which the job fails. Runs on SQLite and, with SVC_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import type { Socket } from "node:net";
import path from "node:path";
import WebSocket from "ws";
import type { CloudMessage } from "../../cloud/workers/protocol.js";
import { pollUntil } from "../support/poll.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";
import { TestWorker } from "../support/worker.js";

type Assign = Extract<CloudMessage, { type: "assign" }>;
const ROUNDS = 10;
const RELEASED = /goes back to the queue: worker w-gone-\d+: its link closed before the assignment went out/g;

describe("worker hub: a link that closes between claim and send", function () {
  this.timeout(180_000);
  let cloud: TestCloud;
  before(async () => {
    cloud = await startTestCloud({ env: { SVC_WORKER_GRACE_MS: "1000" } });
  });
  after(async () => {
    await cloud?.dispose();
  });

  /** Worker A: hello, then `ready` and the close frame in a single write, so both arrive together. */
  async function readyAndGone(name: string): Promise<void> {
    const token = readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
    const socket = new WebSocket(`${cloud.cloudUrl.replace("http", "ws")}/v1/workers/connect`, { headers: { authorization: `Bearer ${token}` } });
    await new Promise<void>((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.send(JSON.stringify({ type: "hello", workerId: name, name, holding: [] }));
    // ws writes each frame to its TCP socket at once; corked, the two frames leave as one write.
    const tcp = (socket as unknown as { _socket: Socket })._socket;
    tcp.cork();
    socket.send(JSON.stringify({ type: "ready" }));
    socket.close();
    tcp.uncork();
    await closed;
  }

  it(`hands the job to the next worker, ${ROUNDS} rounds`, async () => {
    const alice = await newAccount(cloud);
    for (let round = 1; round <= ROUNDS; round++) {
      const job = await alice.client.createJob({ name: `round-${round}`, config: { maxSteps: 1 } });
      await readyAndGone(`w-gone-${round}`);
      const b = await TestWorker.connect(cloud, `w-next-${round}`);
      try {
        b.send({ type: "ready" });
        const assign = await b.next((m): m is Assign => m.type === "assign" && m.job.id === job.id, 15_000).catch(() => null);
        assert.ok(assign, `round ${round}: job ${job.id} never reached the next worker (${(await alice.client.getJob(job.id)).status})\n${cloud.stderr()}`);
        assert.ok(assign.claim > 1, `round ${round}: the first claim was A's, so B's is a later one (got ${assign.claim})`);
        assert.equal((await b.emit(job.id, 1, "training.started", {})).type, "ack");
        assert.equal((await b.emit(job.id, 2, "training.completed", {})).type, "ack");
        assert.equal((await alice.client.getJob(job.id)).status, "completed");
      } finally {
        b.close();
      }
    }
    // Each round's release is logged when it happened at the claim; the window was really hit.
    await pollUntil(() => (cloud.stderr().match(RELEASED) ?? []).length > 0, { timeoutMs: 5_000, description: "a release at the claim to be logged" });
    const hits = (cloud.stderr().match(RELEASED) ?? []).length;
    console.log(`      ${hits} of ${ROUNDS} rounds closed the link between the claim and the send`);
  });

  it("a worker that leaves before starting its job gives it back after the grace; after 5 such assignments the job fails", async () => {
    const alice = await newAccount(cloud);
    const job = await alice.client.createJob({ name: "never-started", config: { maxSteps: 1 } });
    const claims: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const worker = await TestWorker.connect(cloud, `w-leaves-${i}`);
      worker.send({ type: "ready" });
      const assign = await worker.next((m): m is Assign => m.type === "assign" && m.job.id === job.id, 15_000);
      claims.push(assign.claim);
      worker.close(); // gone before training.started
    }
    assert.deepEqual(claims, [1, 3, 5, 7, 9], "each assignment a new claim, each give-back one more");
    const failed = await pollUntil(
      async () => {
        const current = await alice.client.getJob(job.id);
        return current.status === "failed" ? current : undefined;
      },
      { timeoutMs: 15_000, description: "the job to fail after its fifth assignment" },
    );
    assert.match(failed.error ?? "", /^No worker started this job in 5 assignments; the last, "w-leaves-5", stopped before it started\./);
  });
});
