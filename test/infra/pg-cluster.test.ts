// Proves scripts/pg-cluster.mjs gives a working, isolated PostgreSQL that stop() really removes:
// the real `pg` client connects to the URL it returns, and after stop() the server process and
// its data dir are gone and the port refuses connections.
import assert from "node:assert/strict";
import { execFile as execFileCb } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import pg from "pg";
import { startPgCluster, type PgCluster } from "../../scripts/pg-cluster.mjs";

const execFile = promisify(execFileCb);
const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "scripts", "pg-cluster.mjs");

/** True while the pid is a live process (a reaped-later zombie counts as gone). */
function processIsRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

async function selectOne(url: string): Promise<unknown> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    const result = await client.query("select 1 as one, current_database() as db");
    return result.rows[0];
  } finally {
    await client.end();
  }
}

describe("infra: throwaway PostgreSQL cluster", () => {
  // Each case starts its own cluster, so any one of them can run alone (mocha --grep) or first.
  let cluster: PgCluster | undefined;
  afterEach(async () => {
    await cluster?.stop();
    cluster = undefined;
  });

  it("starts on loopback with the svc_test database and answers select 1", async () => {
    cluster = await startPgCluster();
    assert.match(cluster.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/svc_test$/);
    assert.equal(cluster.env.SVC_TEST_DATABASE_URL, cluster.url);
    assert.deepEqual(await selectOne(cluster.url), { one: 1, db: "svc_test" });
    assert.ok(processIsRunning(cluster.pid), "postmaster pid is not running");
  });

  it("stop() stops the server, frees the port and deletes the data dir", async () => {
    cluster = await startPgCluster();
    const { url, dataDir, pid } = cluster;
    assert.deepEqual(await selectOne(url), { one: 1, db: "svc_test" });
    await cluster.stop();
    cluster = undefined;
    assert.equal(processIsRunning(pid), false, `postgres pid ${pid} still running`);
    assert.equal(existsSync(dataDir), false, `${dataDir} still exists`);
    await assert.rejects(selectOne(url), /ECONNREFUSED/);
  });

  it("CLI: start prints one JSON line, stop DATADIR removes it", async () => {
    const { stdout } = await execFile(process.execPath, [CLI, "start"]);
    const lines = stdout.trim().split("\n");
    assert.equal(lines.length, 1, `expected one line, got:\n${stdout}`);
    const started = JSON.parse(lines[0]!) as { url: string; dataDir: string; pid: number };
    try {
      assert.deepEqual(await selectOne(started.url), { one: 1, db: "svc_test" });
    } finally {
      await execFile(process.execPath, [CLI, "stop", started.dataDir]);
    }
    assert.equal(existsSync(started.dataDir), false);
    assert.equal(processIsRunning(started.pid), false);
  });
});
