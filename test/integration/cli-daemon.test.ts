import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { cliPath } from "../support/cloud.js";

describe("the local cloud daemon: auto-start and svc cloud start|status|stop", function () {
  this.timeout(60_000);
  let home: string;
  const run = (...args: string[]) =>
    spawnSync(process.execPath, [cliPath, ...args], {
      encoding: "utf8",
      // Port 0: the daemon picks free ports, so this test never collides with a developer's cloud.
      env: { ...process.env, SVC_HOME: home, SVC_CLOUD_URL: "", SVC_CLOUD_PORT: "0", SVC_EDGE_PORT: "0" },
    });

  const daemonFile = () => JSON.parse(readFileSync(path.join(home, "cloud", "daemon.json"), "utf8"));
  /** Starts a daemon in this case's home the way a first command does. */
  const startOnFirstNeed = () => {
    const models = run("models", "list");
    assert.equal(models.status, 0, models.stderr);
  };

  // Each case has its own SVC_HOME and daemon, so any one of them can run alone (mocha --grep) or first.
  beforeEach(() => {
    home = mkdtempSync(path.join(os.tmpdir(), "svc-daemon-"));
  });
  afterEach(() => {
    run("cloud", "stop");
    rmSync(home, { recursive: true, force: true });
  });

  it("reports a stopped cloud with exit code 3", () => {
    const status = run("cloud", "status");
    assert.equal(status.status, 3);
    assert.match(status.stdout, /svc cloud is not running/);
  });

  it("starts a daemon on first need, when no SVC_CLOUD_URL is set, and waits until it is ready", () => {
    startOnFirstNeed();
    const daemon = daemonFile();
    assert.match(daemon.cloudUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    const credentials = JSON.parse(readFileSync(path.join(home, "credentials.json"), "utf8"));
    assert.equal(credentials.cloudUrl, daemon.cloudUrl, "the minted credentials point at the started daemon");
  });

  it("reuses the running daemon and reports it", () => {
    startOnFirstNeed();
    const before = daemonFile();
    const start = run("cloud", "start");
    assert.equal(start.status, 0);
    assert.match(start.stdout, new RegExp(`already running \\(pid ${before.pid}\\)`));
    const status = run("cloud", "status");
    assert.equal(status.status, 0);
    assert.ok(status.stdout.includes(before.cloudUrl));
  });

  it("stops the daemon gracefully", () => {
    startOnFirstNeed();
    const { pid } = daemonFile();
    const stop = run("cloud", "stop");
    assert.equal(stop.status, 0);
    assert.match(stop.stdout, new RegExp(`svc cloud stopped \\(pid ${pid}\\)`));
    assert.equal(existsSync(path.join(home, "cloud", "daemon.json")), false);
    assert.throws(() => process.kill(pid, 0));
  });
});
