import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";

describe("svc cloud serve (real process)", () => {
  let cloud: TestCloud;
  before(async () => {
    cloud = await startTestCloud();
  });
  after(async () => cloud.dispose());

  it("prints one JSON line with the URLs and writes the same to daemon.json with its pid", () => {
    assert.match(cloud.cloudUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.match(cloud.edgeUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(cloud.deployDomain, `localhost:${new URL(cloud.edgeUrl).port}`);
    const daemon = JSON.parse(readFileSync(path.join(cloud.dataDir, "daemon.json"), "utf8"));
    assert.equal(daemon.cloudUrl, cloud.cloudUrl);
    assert.equal(daemon.edgeUrl, cloud.edgeUrl);
    assert.equal(daemon.pid, cloud.process.pid);
  });

  it("answers /healthz, /readyz and /metrics in Prometheus text", async () => {
    assert.equal((await fetch(`${cloud.cloudUrl}/healthz`)).status, 200);
    assert.equal((await fetch(`${cloud.cloudUrl}/readyz`)).status, 200);
    const metrics = await fetch(`${cloud.cloudUrl}/metrics`);
    assert.match(metrics.headers.get("content-type") ?? "", /text\/plain/);
    const text = await metrics.text();
    assert.match(text, /# TYPE svc_http_requests_total counter/);
    assert.match(text, /svc_process_cpu_user_seconds_total/);
  });

  it("keeps its worker token private (mode 0600)", () => {
    assert.equal(statSync(path.join(cloud.dataDir, "worker-token")).mode & 0o777, 0o600);
  });

  it("on SQLite, refuses a second daemon on the same data dir with a clear error and exit code 1", async () => {
    // The lock is SQLite's (PostgreSQL welcomes several instances): this test's own SQLite cloud,
    // in the PostgreSQL pass too.
    const sqlite = await startTestCloud({ databaseUrl: "" });
    try {
      const second = spawnSync(process.execPath, [cliPath, "cloud", "serve", "--port", "0", "--edge-port", "0", "--data", sqlite.dataDir], {
        encoding: "utf8",
        env: { ...process.env, SVC_HOME: sqlite.home, SVC_DATABASE_URL: "" },
        timeout: 60_000, // a second daemon that starts instead would never exit
      });
      assert.equal(second.status, 1, second.stderr);
      assert.equal(second.stdout, "");
      assert.match(second.stderr, new RegExp(`another svc cloud \\(pid ${sqlite.process.pid}\\) is already using the data dir`));
    } finally {
      await sqlite.dispose();
    }
  });

  it("shuts down gracefully on SIGTERM: exit 0, daemon.json and lock removed", async () => {
    const own = await startTestCloud();
    try {
      assert.equal(await own.stop(), 0);
      assert.equal(existsSync(path.join(own.dataDir, "daemon.json")), false);
      assert.equal(existsSync(path.join(own.dataDir, "cloud.lock")), false);
    } finally {
      await own.dispose();
    }
  });

  it("takes over the lock of a daemon that was killed with SIGKILL", async () => {
    const own = await startTestCloud();
    try {
      await own.kill();
      const again = await own.restart();
      assert.equal((await fetch(`${again.cloudUrl}/readyz`)).status, 200);
      await again.stop();
    } finally {
      await own.dispose();
    }
  });
});

describe("svc CLI basics", () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: "utf8" });

  it("prints help listing the commands", () => {
    const out = run("--help");
    assert.equal(out.status, 0);
    for (const name of ["cloud", "login", "logout", "whoami"]) assert.match(out.stdout, new RegExp(`\\n  ${name} `));
  });

  it("prints per-command help", () => {
    const out = run("cloud", "--help");
    assert.equal(out.status, 0);
    assert.match(out.stdout, /--edge-port E/);
  });

  it("rejects an unknown command with exit 2 and a one-line error", () => {
    const out = run("frobnicate");
    assert.equal(out.status, 2);
    assert.match(out.stderr, /^svc: unknown command "frobnicate"/);
  });

  it("rejects a bad port with a message naming the flag", () => {
    const out = run("cloud", "serve", "--port", "99999");
    assert.equal(out.status, 2);
    assert.match(out.stderr, /--port must be a port number/);
  });
});
