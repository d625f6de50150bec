/**
 * The studio's `/api/jobs` against a real cloud process (issue 15): it answers from the list it
 * keeps while the cloud's watch says that list is current, asks the cloud (304 or a new list)
 * otherwise, and is never behind: a job created on the cloud a moment before is in its answer,
 * also across a cloud restart, when the watch drops and comes back. Studio suites run in the
 * SQLite pass: one cloud instance, whose watch is immediate (cloud-job-list-watch.test.ts shows
 * the PostgreSQL side, where it is not and the studio keeps asking).
 */
import assert from "node:assert/strict";
import type { CloudClient } from "../../sdk/client.js";
import { startStudioStack, studioRequest, type StudioStack } from "../support/studioStack.js";
import { pollUntil } from "../support/poll.js";
import { http as cloudHttp, signInWithNewProject } from "../support/api.js";
import type { TestCloud } from "../support/cloud.js";

/**
 * GETs the cloud's control plane has answered so far (200 or 304), from its /metrics. The read is
 * counted once answered: between two reads the count grows by one plus what others asked.
 */
async function cloudGets(stack: StudioStack): Promise<number> {
  const text = await (await fetch(`${stack.cloud.cloudUrl}/metrics`)).text();
  const count = (status: number) =>
    Number(
      text
        .split("\n")
        .find((l) => l.startsWith(`svc_http_requests_total{listener="control",method="GET",status="${status}"}`))
        ?.split(" ")
        .at(-1) ?? 0,
    );
  return count(200) + count(304);
}

describe("studio: the job list kept and watched", function () {
  this.timeout(60_000);
  let stack: StudioStack;
  let cloud: CloudClient;
  let token: string;
  /** The stack's cloud once restarted below (same port and data). */
  let restarted: TestCloud | undefined;

  before(async () => {
    stack = await startStudioStack();
    ({ token, client: cloud } = await signInWithNewProject(stack.cloud.cloudUrl, stack.projectDir, "watched"));
  });
  after(async () => {
    await restarted?.dispose();
    await stack?.stop();
  });

  const studioJobs = async (): Promise<{ id: string }[]> => {
    const res = await studioRequest(stack.studio, "GET", "/api/jobs");
    assert.equal(res.status, 200, res.text);
    return res.json;
  };

  /** Waits until an answer of the studio asks the cloud nothing: its watch has announced the kept list. */
  const untilAnsweredFromMemory = (description: string) =>
    pollUntil(
      async () => {
        const before = await cloudGets(stack);
        await studioJobs();
        return (await cloudGets(stack)) - before === 1;
      },
      { timeoutMs: 10_000, description },
    );

  it("answers from the list it keeps while the cloud's watch says it is current, without asking the cloud", async () => {
    await cloud.createJob({ name: "first", config: { maxSteps: 1 } });
    // The first answer opens the watch; once it has announced the list, nothing more is asked.
    await studioJobs();
    await untilAnsweredFromMemory("the studio answering /api/jobs without asking the cloud");
    const before = await cloudGets(stack);
    for (let i = 0; i < 20; i++) assert.equal((await studioJobs()).length, 1);
    assert.equal((await cloudGets(stack)) - before, 1, "the cloud was asked (the 1 is the first /metrics read)");
  });

  it("never answers behind the cloud: a job created a moment ago is in the next answer, 30 times in a row", async () => {
    for (let i = 0; i < 30; i++) {
      const job = await cloud.createJob({ name: `just created ${i}`, config: { maxSteps: 1 } });
      const jobs = await studioJobs();
      assert.equal(jobs[0]?.id, job.id, `answer ${i} was behind the cloud`);
      // And the same for a status change (cancelled, through the job's event log).
      await cloud.cancelJob(job.id);
      const cancelled = await studioRequest(stack.studio, "GET", "/api/jobs");
      assert.equal(cancelled.json[0].status, "cancelled", `answer ${i} missed the cancel`);
      assert.equal(cancelled.text, (await cloudHttp(stack.cloud, "GET", `/v1/jobs?projectId=${cloud.projectId}`, { token })).text);
    }
  });

  it("stays current across a cloud restart: the dropped watch is not trusted, and a new one is opened", async () => {
    await studioJobs();
    const port = new URL(stack.cloud.cloudUrl).port;
    await stack.cloud.stop();
    restarted = await stack.cloud.restart({ args: ["--port", port] });
    const job = await cloud.createJob({ name: "after the restart", config: { maxSteps: 1 } });
    assert.equal((await studioJobs())[0]?.id, job.id);
    // The new watch takes over: answers stop asking the cloud again.
    await untilAnsweredFromMemory("the studio's new watch on the restarted cloud");
    const next = await cloud.createJob({ name: "watched again", config: { maxSteps: 1 } });
    assert.equal((await studioJobs())[0]?.id, next.id);
  });
});
