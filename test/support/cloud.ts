/**
 * Starts a real `svc cloud serve` process (the built CLI) on free loopback ports with a fresh data
 * dir, and stops it. With SVC_TEST_DATABASE_URL set, each cloud gets its own fresh PostgreSQL
 * database on that server instead of SQLite.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { randomBytes } from "node:crypto";

export const repoRoot = path.resolve(import.meta.dirname, "../..");
export const cliPath = path.join(repoRoot, "dist", "cli.mjs");

export interface TestCloud {
  cloudUrl: string;
  edgeUrl: string;
  deployDomain: string;
  dataDir: string;
  /** The PostgreSQL database this cloud uses; undefined on SQLite (then the store is in dataDir). */
  databaseUrl?: string;
  home: string;
  process: ChildProcess;
  /** Output the daemon wrote to stderr so far (for assertions that nothing leaked). */
  stderr(): string;
  /** SIGTERM and wait for exit. */
  stop(): Promise<number | null>;
  /** SIGKILL and wait for exit (crash simulation: no cleanup runs). */
  kill(): Promise<void>;
  /** Starts a new daemon process on the same data dir and database (`more`: extra args or env, e.g. the same ports). */
  restart(more?: Pick<StartOptions, "args" | "env">): Promise<TestCloud>;
  /** Removes the data dir (and the PostgreSQL database). */
  dispose(): Promise<void>;
}

export interface StartOptions {
  dataDir?: string;
  /** A PostgreSQL URL; "" forces SQLite even in the PostgreSQL pass (SVC_TEST_DATABASE_URL set). */
  databaseUrl?: string;
  env?: Record<string, string>;
  args?: string[];
  /** Local training workers the daemon starts (default 0: tests drive the worker link themselves). */
  workers?: number;
}

export async function startTestCloud(options: StartOptions = {}): Promise<TestCloud> {
  const home = options.dataDir ? path.dirname(options.dataDir) : mkdtempSync(path.join(os.tmpdir(), "svc-test-"));
  const dataDir = options.dataDir ?? path.join(home, "cloud");
  const databaseUrl = options.databaseUrl ?? (process.env.SVC_TEST_DATABASE_URL ? await createTestDatabase(process.env.SVC_TEST_DATABASE_URL) : undefined);
  const child = spawn(
    process.execPath,
    [cliPath, "cloud", "serve", "--port", "0", "--edge-port", "0", "--data", dataDir, "--workers", String(options.workers ?? 0), ...(options.args ?? [])],
    {
      env: { ...process.env, SVC_HOME: home, ...(databaseUrl ? { SVC_DATABASE_URL: databaseUrl } : { SVC_DATABASE_URL: "" }), ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const line = await firstLine(child, exited, () => stderr);
  const info = JSON.parse(line) as { cloudUrl: string; edgeUrl: string; deployDomain: string };
  const cloud: TestCloud = {
    ...info,
    dataDir,
    databaseUrl,
    home,
    process: child,
    stderr: () => stderr,
    async stop() {
      child.kill("SIGTERM");
      return exited;
    },
    async kill() {
      child.kill("SIGKILL");
      await exited;
    },
    restart: (more = {}) => startTestCloud({ ...options, ...more, dataDir, databaseUrl }),
    async dispose() {
      if (child.exitCode === null && child.signalCode === null) await cloud.stop();
      if (!options.dataDir) rmSync(home, { recursive: true, force: true });
    },
  };
  return cloud;
}

export interface WorkerProcessOptions {
  name: string;
  workDir: string;
  /** Where the worker links to: the cloud's URL unless a proxy or balancer stands before it. */
  cloudUrl?: string;
  backend?: "tfjs" | "torch";
  args?: string[];
  env?: Record<string, string>;
}

/** A remote `svc worker` process holding the cloud's worker token; `log()` is its stderr so far. The caller kills it. */
export function startWorkerProcess(cloud: TestCloud, options: WorkerProcessOptions): ChildProcess & { log(): string } {
  const { name, workDir, cloudUrl = cloud.cloudUrl, backend = "tfjs" } = options;
  const child = spawn(
    process.execPath,
    [cliPath, "worker", "--cloud", cloudUrl, "--name", name, "--work-dir", workDir, "--backend", backend, ...(options.args ?? [])],
    {
      env: { ...process.env, SVC_WORKER_TOKEN: workerToken(cloud), ...options.env },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let log = "";
  child.stderr!.on("data", (chunk) => (log += chunk));
  return Object.assign(child, { log: () => log });
}

/** The token the cloud's own workers hold (`$data/worker-token`): for worker routes and `svc worker`. */
export function workerToken(cloud: Pick<TestCloud, "dataDir">): string {
  return readFileSync(path.join(cloud.dataDir, "worker-token"), "utf8").trim();
}

function firstLine(child: ChildProcess, exited: Promise<number | null>, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once("line", resolve);
    void exited.then((code) => reject(new Error(`svc cloud serve exited with ${code} before it was ready:\n${stderr()}`)));
  });
}

/** A fresh database per cloud on the test server, so tests never see each other's rows. */
async function createTestDatabase(adminUrl: string): Promise<string> {
  const { default: pg } = await import("pg");
  const name = `svc_t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
