import assert from "node:assert/strict";
import { startTestCloud } from "./harness/cloud.js";
import { newAccount } from "./harness/api.js";

// Issue 12 item 2: an open job event stream (a job that never ends: no worker takes it) used to
// keep `svc cloud serve` alive after SIGTERM until the client let go.
describe("svc cloud serve shutdown with an open event stream (real process)", () => {
  it("exits on SIGTERM and ends the stream the client is reading", async () => {
    const cloud = await startTestCloud();
    try {
      const account = await newAccount(cloud);
      const job = await account.client.createJob({ name: "never-taken", config: {} });
      const res = await fetch(`${cloud.cloudUrl}/v1/jobs/${job.id}/events`, { headers: { authorization: `Bearer ${account.token}` } });
      assert.equal(res.status, 200);
      // The headers are in: the stream is open and the server holds it.
      const body = res.text();
      assert.equal(await cloud.stop(), 0);
      // The body ends (no throw): the server ended the stream cleanly rather than dropping it.
      const text = await body;
      assert.doesNotMatch(text, /event: end/, "the job did not finish; only the server went away");
    } finally {
      await cloud.dispose();
    }
  });

  it("exits on SIGINT too", async () => {
    const cloud = await startTestCloud();
    try {
      const account = await newAccount(cloud);
      const job = await account.client.createJob({ name: "never-taken", config: {} });
      const res = await fetch(`${cloud.cloudUrl}/v1/jobs/${job.id}/events`, { headers: { authorization: `Bearer ${account.token}` } });
      assert.equal(res.status, 200);
      const body = res.text();
      const exited = new Promise<number | null>((resolve) => cloud.process.once("exit", resolve));
      cloud.process.kill("SIGINT");
      assert.equal(await exited, 0);
      await body;
    } finally {
      await cloud.dispose();
    }
  });
});
