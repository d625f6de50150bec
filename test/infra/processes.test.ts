// Proves the process helpers: JSON-line and URL readiness without sleeps, early and explicit
// failure when a child dies, and stop() taking the child's whole process group with it.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { spawnProcess, waitForJsonLine, waitForUrl, type ManagedProcess } from "../support/processes.js";
import { pollUntil } from "../support/poll.js";
import { withTempDir } from "../support/tmp.js";

function processIsRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

// A server that also starts a grandchild which ignores SIGTERM, like a stubborn worker would.
const SERVER_WITH_GRANDCHILD = `
const http = require('http');
const { spawn } = require('child_process');
const grandchild = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
const server = http.createServer((req, res) => res.end('ok'));
server.listen(0, '127.0.0.1', () => {
  console.log('starting up');
  console.log(JSON.stringify({ url: 'http://127.0.0.1:' + server.address().port, grandchild: grandchild.pid }));
});
`;

describe("infra: process helpers", () => {
  let proc: ManagedProcess | undefined;
  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
  });

  it("waits for a JSON line and a URL, and stop() kills the whole group", async () => {
    proc = spawnProcess(process.execPath, ["-e", SERVER_WITH_GRANDCHILD], { name: "fixture-server" });
    const ready = await waitForJsonLine<{ url: string; grandchild: number }>(proc, { timeoutMs: 10_000 });
    await waitForUrl(ready.url, { process: proc, timeoutMs: 10_000 });
    assert.ok(processIsRunning(ready.grandchild));

    await proc.stop(500);
    proc = undefined;
    // SIGKILL is asynchronous in the kernel: poll briefly rather than assume it is instant.
    await pollUntil(() => !processIsRunning(ready.grandchild), {
      timeoutMs: 5000,
      description: `grandchild ${ready.grandchild} to die`,
    });
    await assert.rejects(fetch(ready.url), /fetch failed/);
  });

  it("fails at once, with the output, when the process exits before printing JSON", async () => {
    proc = spawnProcess(process.execPath, ["-e", "console.log('no json here'); process.exit(3)"], { name: "quitter" });
    // The rejection names the exit, not the 30 s timeout: it failed when the process did.
    await assert.rejects(waitForJsonLine(proc, { timeoutMs: 30_000 }), (err: Error) => {
      assert.doesNotMatch(err.message, /timed out/);
      assert.match(err.message, /quitter exited \(exit code 3\)/);
      assert.match(err.message, /no json here/);
      return true;
    });
  });

  it("waitForUrl times out with a message naming the URL", async () => {
    await assert.rejects(
      waitForUrl("http://127.0.0.1:9/never", { timeoutMs: 300 }),
      /timed out after 300 ms waiting for http:\/\/127\.0\.0\.1:9\/never to answer/,
    );
  });

  it("withTempDir removes its folder even when the callback throws", async () => {
    let seen = "";
    await assert.rejects(
      withTempDir("infra", async (dir) => {
        seen = dir;
        assert.ok(existsSync(dir));
        throw new Error("boom");
      }),
      /boom/,
    );
    assert.equal(existsSync(seen), false);
  });
});
