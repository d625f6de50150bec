#!/usr/bin/env node
// Throwaway PostgreSQL cluster for tests, from Debian's `postgresql` server binaries.
//
// CLI:
//   node scripts/pg-cluster.mjs start            -> one JSON line {"url","dataDir","pid","port"}
//   node scripts/pg-cluster.mjs start --shell    -> `export SVC_TEST_DATABASE_URL=...` lines for eval
//   node scripts/pg-cluster.mjs stop DATADIR     -> stops it and deletes DATADIR
// API:
//   const pg = await startPgCluster();  // { url, dataDir, pid, port, stop() }
//   process.env.SVC_TEST_DATABASE_URL = pg.url; ...; await pg.stop();
//
// The cluster listens on 127.0.0.1 only, on a free port, with its Unix socket inside its own
// data dir (so it never collides with a system cluster), trusts loopback connections, and runs
// with durability off: it is deleted after the run anyway.
import { execFile as execFileCb, execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { chown, mkdtemp, readFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFile = promisify(execFileCb);
const PG_ROOT = "/usr/lib/postgresql";
const DEFAULT_DATABASE = "svc_test";
const SUPERUSER = "postgres";

/** Newest installed server version's bin dir, e.g. /usr/lib/postgresql/15/bin. */
export function findPgBinDir() {
  const versions = existsSync(PG_ROOT) ? readdirSync(PG_ROOT).filter((v) => existsSync(path.join(PG_ROOT, v, "bin", "initdb"))) : [];
  if (versions.length === 0) {
    throw new Error(`no PostgreSQL server under ${PG_ROOT}/*/bin; run scripts/setup-system.sh`);
  }
  versions.sort((a, b) => Number(b) - Number(a));
  return path.join(PG_ROOT, versions[0], "bin");
}

/**
 * Postgres refuses to run as root, so as root every server command runs as the `postgres`
 * system user (created by Debian's package). As any other user it runs as that user.
 */
function asServerUser(cmd, args) {
  return process.getuid?.() === 0 ? ["runuser", ["-u", SUPERUSER, "--", cmd, ...args]] : [cmd, args];
}

async function runServerCommand(cmd, args) {
  const [file, argv] = asServerUser(cmd, args);
  try {
    // cwd "/": the server user must not depend on reaching the caller's working directory (initdb
    // fails with "could not identify current directory" when it cannot).
    return await execFile(file, argv, { maxBuffer: 16 * 1024 * 1024, cwd: "/" });
  } catch (err) {
    const e = /** @type {{stderr?: string, stdout?: string, message: string}} */ (err);
    throw new Error(`${path.basename(cmd)} failed: ${(e.stderr || e.stdout || e.message).trim()}`);
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Where the data dir goes: $TMPDIR, unless we run as root and the `postgres` user could not
 * reach into it (e.g. TMPDIR=/root/tmp); then /tmp.
 */
function dataDirParent() {
  const tmp = os.tmpdir();
  if (process.getuid?.() !== 0) return tmp;
  let dir = tmp;
  for (; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return "/tmp"; // not searchable by others
  }
  return tmp;
}

function serverUserIds() {
  const uid = Number(execFileSync("id", ["-u", SUPERUSER], { encoding: "utf8" }).trim());
  const gid = Number(execFileSync("id", ["-g", SUPERUSER], { encoding: "utf8" }).trim());
  return { uid, gid };
}

function postmasterPid(dataDir) {
  try {
    return Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  } catch {
    return undefined;
  }
}

/**
 * A stopped postmaster stays a zombie until PID 1 reaps it (about a second on these machines),
 * and kill(pid, 0) still succeeds on a zombie: read its state instead.
 */
function isAlive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * Stops the cluster in DATADIR (immediate mode: nothing in it is worth a checkpoint) and deletes
 * the folder. Synchronous so that it can also run from a process 'exit' hook.
 */
export function stopPgClusterSync(dataDir) {
  if (!existsSync(path.join(dataDir, "PG_VERSION"))) {
    throw new Error(`${dataDir} is not a PostgreSQL data dir; refusing to delete it`);
  }
  const pid = postmasterPid(dataDir);
  const [file, argv] = asServerUser(path.join(findPgBinDir(), "pg_ctl"), ["stop", "-D", dataDir, "-m", "immediate", "-w", "-t", "30"]);
  try {
    execFileSync(file, argv, { stdio: "pipe", cwd: "/" });
  } catch {
    // Already stopped, or pg_ctl could not reach it: the postmaster's own pid decides below.
  }
  if (pid && isAlive(pid)) {
    process.kill(pid, "SIGKILL");
    const deadline = Date.now() + 10_000;
    while (isAlive(pid)) {
      if (Date.now() > deadline) throw new Error(`postgres pid ${pid} survived SIGKILL`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20); // short blocking poll
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
}

/**
 * Starts a fresh cluster and creates `database`. Returns its URL and a stop() that stops the
 * server and deletes the data dir. With `stopOnExit` (the default) a process 'exit' hook does the
 * same if stop() is never called, so a crashed test run leaves no server behind.
 */
export async function startPgCluster({ database = DEFAULT_DATABASE, stopOnExit = true } = {}) {
  const binDir = findPgBinDir();
  const dataDir = await mkdtemp(path.join(dataDirParent(), "svc-pg-"));
  try {
    if (process.getuid?.() === 0) {
      const { uid, gid } = serverUserIds();
      await chown(dataDir, uid, gid);
    }
    await runServerCommand(path.join(binDir, "initdb"), [
      "-D",
      dataDir,
      "-U",
      SUPERUSER,
      "--auth=trust",
      "--encoding=UTF8",
      "--locale=C",
      "--no-sync",
      "--no-instructions",
    ]);
    const port = await startServer(binDir, dataDir);
    const url = `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`;
    await runServerCommand(path.join(binDir, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", SUPERUSER, database]);
    const pid = postmasterPid(dataDir);
    if (!pid) throw new Error(`postgres started but ${dataDir}/postmaster.pid is missing`);

    const onExit = () => stopPgClusterSync(dataDir);
    if (stopOnExit) process.once("exit", onExit);
    let stopped = false;
    return {
      url,
      dataDir,
      pid,
      port,
      env: { SVC_TEST_DATABASE_URL: url },
      async stop() {
        if (stopped) return;
        stopped = true;
        process.removeListener("exit", onExit);
        stopPgClusterSync(dataDir);
      },
    };
  } catch (err) {
    if (existsSync(path.join(dataDir, "PG_VERSION"))) stopPgClusterSync(dataDir);
    else rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

/** pg_ctl -w returns once the server accepts connections. Retries if the free port got taken. */
async function startServer(binDir, dataDir) {
  const logFile = path.join(dataDir, "server.log");
  let lastError;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const serverOptions = [
      "-c listen_addresses=127.0.0.1",
      `-p ${port}`,
      `-c unix_socket_directories=${dataDir}`,
      // Throwaway data: skip everything that makes writes durable.
      "-c fsync=off",
      "-c synchronous_commit=off",
      "-c full_page_writes=off",
    ].join(" ");
    try {
      await runServerCommand(path.join(binDir, "pg_ctl"), ["start", "-D", dataDir, "-w", "-t", "30", "-l", logFile, "-o", serverOptions]);
      return port;
    } catch (err) {
      lastError = err;
      const serverLog = await readFile(logFile, "utf8").catch(() => "");
      if (!/could not bind|Address already in use/.test(serverLog)) {
        throw new Error(`${/** @type {Error} */ (err).message}\n${serverLog.trim()}`);
      }
    }
  }
  throw lastError;
}

async function main(argv) {
  const [command, arg] = argv;
  if (command === "start") {
    // The CLI leaves the cluster running for a later `stop DATADIR`.
    const cluster = await startPgCluster({ stopOnExit: false });
    if (arg === "--shell") {
      console.log(`export SVC_TEST_DATABASE_URL='${cluster.url}'`);
      console.log(`export SVC_TEST_PG_DATADIR='${cluster.dataDir}'`);
    } else {
      console.log(JSON.stringify({ url: cluster.url, dataDir: cluster.dataDir, pid: cluster.pid, port: cluster.port }));
    }
  } else if (command === "stop" && arg) {
    stopPgClusterSync(path.resolve(arg));
  } else {
    console.error("usage: node scripts/pg-cluster.mjs start [--shell] | stop DATADIR");
    process.exit(2);
  }
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  main(process.argv.slice(2)).catch((err) => {
    console.error(`pg-cluster: ERROR: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  });
}
