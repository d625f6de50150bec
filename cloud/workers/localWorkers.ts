/**
 * The daemon's own training workers: child processes running `svc worker` against this cloud.
 * A worker that dies is restarted (with a growing delay), so a crash in one job does not take
 * training down for the next; the hub fails the job the dead worker was running (one it had not
 * started goes back to the queue). They share the cloud's machine, so they read its model files in place.
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { packageRoot } from "../../sdk/packageRoot.js";
import { nodeScriptCommand, spawnNodeCommand } from "../../sdk/platform/nodeChild.js";
import { stopChild } from "../../sdk/platform/stop.js";

export interface LocalWorkers {
  stop(): Promise<void>;
}

export function startLocalWorkers(options: { count: number; cloudUrl: string; token: string; dataDir: string; log: (line: string) => void }): LocalWorkers {
  const cli = path.join(packageRoot(), "dist", "cli.mjs");
  const children = new Set<ChildProcess>();
  let stopping = false;

  const launch = (index: number, restarts: number) => {
    const name = `local-${index + 1}`;
    const child = spawnNodeCommand(
      nodeScriptCommand(cli, process.execPath),
      ["worker", "--cloud", options.cloudUrl, "--name", name, "--work-dir", path.join(options.dataDir, "work"), "--shared-files"],
      {
        // The token travels in the environment, not argv, where `ps` would show it.
        env: { ...process.env, SVC_WORKER_TOKEN: options.token },
        // The IPC channel carries the stop request (sdk/platform/stop.ts).
        stdio: ["ignore", "inherit", "inherit", "ipc"],
      },
    );
    children.add(child);
    child.on("exit", (code, signal) => {
      children.delete(child);
      if (stopping) return;
      options.log(`worker ${name} exited (${signal ?? code}); restarting`);
      const timer = setTimeout(() => launch(index, restarts + 1), Math.min(500 * 2 ** restarts, 30_000));
      timer.unref();
    });
  };
  for (let i = 0; i < options.count; i++) launch(i, 0);

  return {
    async stop() {
      stopping = true;
      await Promise.all([...children].map((child) => stopChild(child, { graceMs: 5000 })));
    },
  };
}
