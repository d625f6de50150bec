/**
 * Finding (and if needed starting) the local cloud daemon. Clients with no SVC_CLOUD_URL use the
 * daemon recorded in `$SVC_HOME/cloud/daemon.json`; when none answers, they start one in the
 * background and wait for `/readyz`.
 */
import { openSync, closeSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { nodeScriptCommand, spawnNodeCommand } from "./platform/nodeChild.js";
import { packageRoot } from "./packageRoot.js";
import { defaultCloudDataDir, DEFAULT_CLOUD_PORT, DEFAULT_EDGE_PORT } from "./paths.js";
import { readJsonFile } from "./files.js";
import { isLoopbackUrl } from "./errors.js";

export interface DaemonFile {
  cloudUrl: string;
  edgeUrl: string;
  deployDomain: string;
  pid: number;
  startedAt?: string;
}

export const daemonFilePath = (dataDir = defaultCloudDataDir()): string => path.join(dataDir, "daemon.json");

export async function readDaemonFile(dataDir?: string): Promise<DaemonFile | null> {
  return readJsonFile<DaemonFile>(daemonFilePath(dataDir));
}

export async function isReady(cloudUrl: string, timeoutMs = 2000): Promise<boolean> {
  try {
    const res = await fetch(`${cloudUrl}/readyz`, { signal: AbortSignal.timeout(timeoutMs) });
    return res.ok;
  } catch {
    return false;
  }
}

/** The running daemon for the data dir, or null when none answers. */
export async function liveDaemon(dataDir?: string): Promise<DaemonFile | null> {
  const file = await readDaemonFile(dataDir);
  return file && (await isReady(file.cloudUrl)) ? file : null;
}

export interface StartDaemonOptions {
  dataDir?: string;
  port?: number;
  edgePort?: number;
  /** How long to wait for /readyz. */
  timeoutMs?: number;
  /** More `svc cloud serve` options (e.g. `--retain-jobs 30d`). */
  extraArgs?: string[];
}

/**
 * The ports the daemon of a data dir was last started with (`svc cloud start --port`), so a daemon a client starts
 * later listens where the user chose, and where the credentials minted against it point.
 */
const daemonPortsPath = (dataDir: string): string => path.join(dataDir, "daemon-ports.json");

function recordedPorts(dataDir: string): { port?: number; edgePort?: number } {
  try {
    return JSON.parse(readFileSync(daemonPortsPath(dataDir), "utf8")) as { port?: number; edgePort?: number };
  } catch {
    return {};
  }
}

/**
 * Starts `svc cloud serve` detached, logging to `<data>/cloud.log`, and waits until it is ready. Ports: the ones
 * given, else SVC_CLOUD_PORT / SVC_EDGE_PORT, else the ones it was last started with, else the defaults.
 */
export async function startDaemon(options: StartDaemonOptions = {}): Promise<DaemonFile> {
  const dataDir = options.dataDir ?? defaultCloudDataDir();
  const { mkdirSync } = await import("node:fs");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const recorded = recordedPorts(dataDir);
  const port = options.port ?? envPort("SVC_CLOUD_PORT") ?? recorded.port ?? DEFAULT_CLOUD_PORT;
  const edgePort = options.edgePort ?? envPort("SVC_EDGE_PORT") ?? recorded.edgePort ?? DEFAULT_EDGE_PORT;
  // Port 0 (any free port) is no choice to repeat: the next start keeps what was recorded before.
  if (port !== 0 && edgePort !== 0) writeFileSync(daemonPortsPath(dataDir), JSON.stringify({ port, edgePort }) + "\n");
  const logFile = path.join(dataDir, "cloud.log");
  const logStart = fileSize(logFile);
  const log = openSync(logFile, "a");
  const cli = path.join(packageRoot(), "dist", "cli.mjs");
  const args = ["cloud", "serve", "--data", dataDir, "--port", String(port), "--edge-port", String(edgePort), ...(options.extraArgs ?? [])];
  const child = spawnNodeCommand(nodeScriptCommand(cli), args, { detached: true, stdio: ["ignore", log, log], env: process.env });
  closeSync(log);
  let exited: number | null = null;
  child.on("exit", (code) => (exited = code ?? 1));
  child.unref();
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (Date.now() < deadline) {
    if (exited !== null) {
      // What it wrote before exiting (a missing native binding, a taken port) is the reason: say it here, not only in the log.
      const said = logSince(logFile, logStart);
      throw new Error(`the svc cloud daemon exited with code ${exited} while starting${said ? `:\n${said}` : ""}\n(see ${logFile})`);
    }
    const file = await readDaemonFile(dataDir).catch(() => null);
    if (file && file.pid === child.pid && (await isReady(file.cloudUrl))) return file;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the svc cloud daemon did not become ready within ${(options.timeoutMs ?? 30_000) / 1000} s; see ${path.join(dataDir, "cloud.log")}`);
}

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

/** The log's text from `offset` on, its last 4000 characters at most. */
function logSince(file: string, offset: number): string {
  try {
    return readFileSync(file).subarray(offset).toString("utf8").trim().slice(-4000);
  } catch {
    return "";
  }
}

function envPort(name: string): number | undefined {
  const value = process.env[name];
  return value === undefined || value === "" ? undefined : Number(value);
}

/** The configured URL if given, else SVC_CLOUD_URL if set, else the live local daemon, else a freshly started one. */
export async function resolveCloudUrl(configured?: string): Promise<string> {
  const url = configured || process.env.SVC_CLOUD_URL;
  if (url) return url.replace(/\/+$/, "");
  const live = await liveDaemon();
  if (live) return live.cloudUrl;
  return (await startDaemon()).cloudUrl;
}

/**
 * Starts the local daemon when `cloudUrl` (what the credentials name) is this machine's and does not answer, on that
 * URL's port so the credentials stay good: clients start the daemon they need (README). Not when SVC_CLOUD_URL names
 * a cloud: that one is someone else's to start.
 */
export async function ensureLocalDaemon(cloudUrl: string): Promise<void> {
  if (process.env.SVC_CLOUD_URL || !isLoopbackUrl(cloudUrl) || (await isReady(cloudUrl))) return;
  const live = await liveDaemon();
  if (live) return; // running on other ports: the caller's own request says where it is not
  await startDaemon({ port: Number(new URL(cloudUrl).port) || DEFAULT_CLOUD_PORT });
}
