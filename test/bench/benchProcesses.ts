/**
 * Bench helpers: the cloud and the studio each in a process of their own, from source, as users
 * run them (`svc cloud serve` is the daemon the CLI, the studio and the extension talk to; `svc
 * dev` and the extension run the studio). A benchmark of a relay (the studio) against the cloud
 * measures each in its own process, so that neither's garbage collection, event loop or socket
 * writes are charged to the other or to the client reading them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import readline from "node:readline";

export interface CloudProcess {
  cloudUrl: string;
  edgeUrl: string;
  /** Where the worker token lives (bench/workerRun.ts reads it). */
  ctx: { dataDir: string };
  close(): Promise<void>;
}

export interface StudioProcess {
  url: string;
  token: string;
  close(): Promise<void>;
}

const repo = path.resolve(import.meta.dirname, "../..");

export async function startCloudProcess(dataDir: string): Promise<CloudProcess> {
  const args = [path.join(repo, "cli/main.ts"), "cloud", "serve", "--port", "0", "--edge-port", "0", "--data", dataDir, "--workers", "0"];
  const { line, close } = await startChild(args, { SVC_DATABASE_URL: "" });
  const { cloudUrl, edgeUrl } = JSON.parse(line) as { cloudUrl: string; edgeUrl: string };
  return { cloudUrl, edgeUrl, ctx: { dataDir }, close };
}

/** The studio of `projectDir`, reaching the cloud through `env` (SVC_HOME, SVC_CLOUD_URL). */
export async function startStudioProcess(projectDir: string, env: NodeJS.ProcessEnv): Promise<StudioProcess> {
  const { line, close } = await startChild([path.join(repo, "test/bench/studioChild.ts"), projectDir], env);
  const { url, token } = JSON.parse(line) as { url: string; token: string };
  return { url, token, close };
}

/** Starts `node --import tsx ...args`; resolves with its first stdout line, printed once it is ready. */
async function startChild(args: string[], env: NodeJS.ProcessEnv): Promise<{ line: string; close: () => Promise<void> }> {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once("line", resolve);
    child.once("exit", (code) => reject(new Error(`${path.basename(args[0])} exited with ${code} before it was ready`)));
  });
  return {
    line,
    async close() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
