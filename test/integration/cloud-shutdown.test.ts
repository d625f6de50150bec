import assert from "node:assert/strict";
import { startTestCloud } from "../support/cloud.js";
import { newAccount } from "../support/api.js";
import { DRAIN_ROUTE, DRAIN_TOKEN_HEADER, requestDaemonDrain } from "../../sdk/platform/daemonDrain.js";
import { existsSync } from "node:fs";
import path from "node:path";

// Issue 12 item 2: an open job event stream (a job that never ends: no worker takes it) used to
// keep `svc cloud serve` alive after SIGTERM until the client let go.
describe("svc cloud serve shutdown with an open event stream (real process)", () => {
  it("exits on SIGTERM and ends the stream the client is reading", async () => {
    const cloud = await startTestCloud();
    try {
      const account = await newAccount(cloud);
      const job = await account.client.createJob({ name: "never-taken", config: { maxSteps: 1 } });
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
      const job = await account.client.createJob({ name: "never-taken", config: { maxSteps: 1 } });
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

  it("exits on a drain request over HTTP (`svc cloud stop` on Windows, where a signal kills), and refuses one without the data dir's token", async () => {
    const cloud = await startTestCloud();
    try {
      const exited = new Promise<number | null>((resolve) => cloud.process.once("exit", resolve));
      const forged = await fetch(`${cloud.cloudUrl}${DRAIN_ROUTE}`, { method: "POST", headers: { [DRAIN_TOKEN_HEADER]: "svc_drain_guessed" } });
      assert.equal(forged.status, 403);
      assert.equal((await forged.json()).error.code, "forbidden");
      assert.equal((await fetch(`${cloud.cloudUrl}/readyz`)).status, 200, "still serving");
      assert.equal(await requestDaemonDrain(cloud.cloudUrl, cloud.dataDir), true);
      assert.equal(await exited, 0);
      assert.ok(!existsSync(path.join(cloud.dataDir, "daemon.json")), "daemon.json removed by the graceful shutdown");
    } finally {
      await cloud.dispose();
    }
  });
});
