/** `svc dev` as a user runs it: prints the URL, serves the studio with its token, stops on Ctrl-C. */
import assert from "node:assert/strict";
import path from "node:path";
import { repoRoot } from "../support/cloud.js";
import { copyQuickstart } from "../support/studioStack.js";
import { studioOf } from "../support/studioDev.js";
import { spawnProcess, waitForExit } from "../support/processes.js";
import { createTempDir, type TempDir } from "../support/tmp.js";

describe("svc dev", function () {
  this.timeout(60_000);
  let tmp: TempDir;
  before(async () => (tmp = await createTempDir("svc-dev")));
  after(async () => tmp?.remove());

  it("serves the studio for the current folder and stops on SIGINT", async () => {
    const project = copyQuickstart(tmp.path);
    // The cloud URL is never contacted here: nothing but the page and the manifest is requested.
    const env = { ...process.env, SVC_HOME: path.join(tmp.path, "home"), SVC_CLOUD_URL: "http://127.0.0.1:9" };
    const dev = spawnProcess(process.execPath, [path.join(repoRoot, "dist", "cli.mjs"), "dev", "--port", "0"], { cwd: project, env, name: "svc-dev" });
    try {
      const { url, token } = await studioOf(dev, 20_000);
      const manifest = await (await fetch(`${url}/api/manifest`, { headers: { "X-Svc-Studio-Token": token } })).json();
      assert.deepEqual(manifest, {
        status: "ok",
        trainer: { name: "quickstart-json-answers", datasets: ["data/train.jsonl", "data/eval.jsonl"], byteTokenLimit: 160 },
      });
      dev.child.kill("SIGINT");
      const status = await waitForExit(dev, 10_000);
      assert.equal(status.code, 0, dev.recentOutput());
    } finally {
      await dev.stop();
    }
  });

  it("rejects a bad --port with a usage error", async () => {
    const dev = spawnProcess(process.execPath, [path.join(repoRoot, "dist", "cli.mjs"), "dev", "--port", "http"], { cwd: tmp.path, name: "svc-dev" });
    const status = await waitForExit(dev, 10_000);
    await dev.stop();
    assert.equal(status.code, 2);
    assert.match(dev.recentOutput(), /--port must be a port number/);
  });
});
