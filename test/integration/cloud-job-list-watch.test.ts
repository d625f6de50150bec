/**
 * `GET /v1/jobs/watch` against a real cloud process (issue 15): the project's job-list ETag at once
 * and after every change. On one instance (SQLite) each change is announced before the request
 * that made it is answered, which is what lets the studio answer from the list it keeps; with
 * PostgreSQL (where other instances may write) the stream says it is not immediate.
 */
import assert from "node:assert/strict";
import { pollUntil } from "../support/poll.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { http as cloudHttp, newAccount, type Account } from "../support/api.js";
import { watchJobList as watch } from "../support/jobListWatch.js";

const onPostgres = Boolean(process.env.SVC_TEST_DATABASE_URL);

/** The ETag `GET /v1/jobs` answers with now. */
async function listEtag(cloud: TestCloud, account: Account): Promise<string> {
  const res = await cloudHttp(cloud, "GET", `/v1/jobs?projectId=${account.projectId}`, { token: account.token });
  assert.equal(res.status, 200, res.text);
  return res.headers.get("etag")!;
}

describe("cloud API: the job list's watch", () => {
  let cloud: TestCloud;
  let alice: Account;
  let bob: Account;

  before(async () => {
    cloud = await startTestCloud();
    alice = await newAccount(cloud);
    bob = await newAccount(cloud);
  });
  after(async () => cloud.dispose());

  it("announces the list's ETag at once, then each creation and status change, each before its request is answered (one instance)", async () => {
    const w = await watch(cloud, alice);
    try {
      assert.equal(w.versions.length, 1);
      assert.equal(w.versions[0].etag, await listEtag(cloud, alice));
      assert.equal(w.versions[0].immediate, !onPostgres);
      const changes: (() => Promise<unknown>)[] = [];
      for (let i = 0; i < 10; i++) changes.push(() => alice.client.createJob({ name: `watched ${i}`, config: { maxSteps: 1 } }));
      // A status change (queued to cancelled, through the job's event log) changes the list too.
      changes.push(async () => alice.client.cancelJob((await alice.client.listJobs())[0].id));
      for (const change of changes) {
        const announced: number = w.versions.length;
        await change();
        if (onPostgres) await pollUntil(() => w.versions.length > announced, { timeoutMs: 10_000, description: "the change announced" });
        // On SQLite the announcement was already here when the answer came: no waiting.
        assert.equal(w.versions.length, announced + 1, "one announcement per change, before its answer");
        assert.equal(w.versions.at(-1)!.etag, await listEtag(cloud, alice));
      }
    } finally {
      w.close();
    }
  });

  it("announces nothing for another project's changes", async () => {
    const w = await watch(cloud, alice);
    try {
      await bob.client.createJob({ name: "bob's", config: { maxSteps: 1 } });
      await alice.client.createJob({ name: "alice's", config: { maxSteps: 1 } });
      await pollUntil(() => w.versions.length === 2, { timeoutMs: 10_000, description: "alice's change announced" });
      assert.deepEqual(
        w.versions.map((v) => v.etag.includes(alice.projectId)),
        [true, true],
      );
      assert.equal(w.versions[1].etag, await listEtag(cloud, alice));
    } finally {
      w.close();
    }
  });

  it("answers like GET /v1/jobs when the project is not the caller's, or there is no token", async () => {
    for (const [token, projectId] of [
      [bob.token, alice.projectId],
      [undefined, alice.projectId],
      [alice.token, undefined],
    ] as const) {
      const query = projectId ? `?projectId=${projectId}` : "";
      const list = await cloudHttp(cloud, "GET", `/v1/jobs${query}`, { token });
      const watched = await cloudHttp(cloud, "GET", `/v1/jobs/watch${query}`, { token });
      assert.ok(list.status >= 400, list.text);
      assert.equal(watched.status, list.status, watched.text);
      assert.equal(watched.body.error.code, list.body.error.code);
    }
  });
});
