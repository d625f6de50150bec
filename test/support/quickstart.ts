/**
 * examples/quickstart as tests train it: a copy with its training shortened, the built CLI run in
 * it against a test cloud (SVC_HOME and SVC_CLOUD_URL of that cloud), the client of the project
 * `svc start` made for it, and its data for jobs created through the API.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { CloudClient } from "../../sdk/client.js";
import { readProjectState } from "../../sdk/state.js";
import { cliPath, repoRoot, type TestCloud } from "./cloud.js";
import { replaceOnce } from "./text.js";

export const QUICKSTART_DIR = path.join(repoRoot, "examples", "quickstart");

/** The quickstart trainer's settings a test may change: its steps, every how many it evaluates and saves a checkpoint, its batch. */
export interface QuickstartShape {
  maxSteps?: number;
  evalSteps?: number;
  saveSteps?: number;
  batchSize?: number;
}

/** Copies examples/quickstart (sources and data only, never its `.svc/`) to `<into>/quickstart`, shaped as `shape` says. */
export function copyQuickstart(into: string, shape: QuickstartShape = {}): string {
  return copyTo(path.join(into, "quickstart"), shape);
}

/** A copy of the quickstart in a new temp folder of its own (the caller removes it). */
export function quickstartProject(shape: QuickstartShape = {}): string {
  return copyTo(mkdtempSync(path.join(os.tmpdir(), "svc-qs-")), shape);
}

function copyTo(dir: string, shape: QuickstartShape): string {
  cpSync(QUICKSTART_DIR, dir, { recursive: true, filter: (source) => !source.split(path.sep).includes(".svc") && !source.includes("node_modules") });
  const file = path.join(dir, "src", "svc", "index.ts");
  let text = readFileSync(file, "utf8");
  for (const [field, value] of Object.entries(shape)) {
    if (value === undefined) continue;
    const found = new RegExp(`\\b${field}: \\d+`).exec(text)?.[0];
    if (!found) throw new Error(`examples/quickstart/src/svc/index.ts has no ${field} to change`);
    text = replaceOnce(text, found, `${field}: ${value}`);
  }
  writeFileSync(file, text);
  return dir;
}

/** The quickstart's data file `name` (train.jsonl, eval.jsonl). */
export const quickstartData = (name: string) => readFileSync(path.join(QUICKSTART_DIR, "data", name), "utf8");

const cliEnv = (cloud: TestCloud, env: Record<string, string> = {}) => ({ ...process.env, SVC_HOME: cloud.home, SVC_CLOUD_URL: cloud.cloudUrl, ...env });

/** Runs `svc <args>` in `cwd` against `cloud` to its end. */
export function runSvc(cloud: TestCloud, cwd: string, args: string[], env: Record<string, string> = {}, timeoutMs = 240_000): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [cliPath, ...args], { cwd, encoding: "utf8", env: cliEnv(cloud, env), timeout: timeoutMs });
}

export interface TrainingStart {
  child: ChildProcess;
  /** stdout so far, line by line. */
  lines: string[];
  stderr(): string;
  exited: Promise<number | null>;
}

/** Starts `svc start` in `cwd` against `cloud` and resolves once it printed its first training step. */
export async function startUntilTraining(cloud: TestCloud, cwd: string): Promise<TrainingStart> {
  const child = spawn(process.execPath, [cliPath, "start"], { cwd, env: cliEnv(cloud) });
  const lines: string[] = [];
  let stderr = "";
  child.stderr!.on("data", (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      lines.push(line);
      if (/^step=\d+ loss=/.test(line)) resolve();
    });
    void exited.then(() => reject(new Error(`svc start exited early:\n${lines.join("\n")}\n${stderr}`)));
  });
  return { child, lines, stderr: () => stderr, exited };
}

/** The client of the user `svc` signed in on `cloud`, scoped to the project of the folder `dir`. */
export async function cliProjectClient(cloud: TestCloud, dir: string): Promise<CloudClient> {
  const { token } = JSON.parse(readFileSync(path.join(cloud.home, "credentials.json"), "utf8"));
  return new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: (await readProjectState(dir))?.projectId });
}
