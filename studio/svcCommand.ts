/**
 * Running the project's own `svc` CLI as a subprocess. The studio never imports user code or runs
 * esbuild in its own process (it may be VS Code's extension host): the manifest and training runs
 * happen in `svc manifest --json` / `svc start` children (DESIGN.md section 8).
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { nodeExecutable } from "../sdk/nodeRuntime.js";
import { packageRoot } from "../sdk/packageRoot.js";

/** argv prefix that runs the CLI, e.g. `[node, .../dist/cli.mjs]` or `[<workspace>/node_modules/.bin/svc]`. */
export type SvcCommand = readonly [string, ...string[]];

/** This package's own built CLI under the user's Node (never VS Code's Electron). */
export function defaultSvcCommand(): SvcCommand {
  return [nodeExecutable(), path.join(packageRoot(), "dist", "cli.mjs")];
}

export function spawnSvc(command: SvcCommand, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): ChildProcess {
  const [file, ...prefix] = command;
  // NO_COLOR: the output is shown as plain text in the browser, escape codes would be noise.
  return spawn(file, [...prefix, ...args], { cwd, env: { ...env, NO_COLOR: "1", FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe"] });
}

/** Resolves once the child really started, or rejects with the spawn error (ENOENT, EACCES). */
export function spawned(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
}
