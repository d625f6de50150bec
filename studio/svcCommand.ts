/**
 * Running the project's own `svc` CLI as a subprocess. The studio never imports user code or runs
 * esbuild in its own process (it may be VS Code's extension host): the manifest and training runs
 * happen in `svc manifest --json` / `svc start` children (DESIGN.md section 8).
 */
import type { ChildProcess } from "node:child_process";
import path from "node:path";
import { packageRoot } from "../sdk/packageRoot.js";
import { nodeScriptCommand, spawnNodeCommand, type NodeScriptCommand, type SpawnFunction } from "../sdk/platform/nodeChild.js";

/** argv prefix that runs the CLI: `[node, .../dist/cli.mjs]` (never a `.bin` shim, which Windows cannot spawn without a shell). */
export type SvcCommand = NodeScriptCommand;

/** This package's own built CLI under the user's Node (never VS Code's Electron). */
export function defaultSvcCommand(): SvcCommand {
  return nodeScriptCommand(path.join(packageRoot(), "dist", "cli.mjs"));
}

/**
 * Starts `svc <args>` with an IPC channel, so the child can be asked to stop (`stopChild`, sdk/platform/stop.ts)
 * where a signal would kill it outright (Windows).
 */
export function spawnSvc(command: SvcCommand, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env, spawnFn?: SpawnFunction): ChildProcess {
  // NO_COLOR: the output is shown as plain text in the browser, escape codes would be noise.
  return spawnNodeCommand(command, args, { cwd, env: { ...env, NO_COLOR: "1", FORCE_COLOR: "0" }, stdio: ["ignore", "pipe", "pipe", "ipc"] }, spawnFn);
}

/** Resolves once the child really started, or rejects with the spawn error (ENOENT, EACCES). */
export function spawned(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", reject);
  });
}

/** How a short `svc` command (`svc manifest --json`, a dataset preview) ended: its output, or why there is none. */
export type SvcOutput = { kind: "exited"; stdout: string; stderr: string; code: number | null } | { kind: "failed"; error: string };

/**
 * Runs `svc <args>` in the project to its end and collects what it printed, killing it after
 * `timeoutMs`. stderr keeps its last `stderrLimit` characters (the error is at its end); stdout,
 * which the caller parses, is all kept up to `stdoutLimit`, past which the run is refused rather
 * than parsed short. `onStderr` sees each piece of stderr as it comes (a progress report).
 */
export async function runSvcToEnd(
  command: SvcCommand,
  args: string[],
  projectDir: string,
  env: NodeJS.ProcessEnv,
  {
    timeoutMs,
    stdoutLimit,
    stderrLimit = 256 * 1024,
    onStderr,
  }: { timeoutMs: number; stdoutLimit: number; stderrLimit?: number; onStderr?: (text: string) => void },
): Promise<SvcOutput> {
  const name = `svc ${args[0]}`;
  const child = spawnSvc(command, args, projectDir, env);
  const stdout: string[] = [];
  let stdoutLength = 0;
  let stderr = "";
  let overflow = false;
  child.stdout!.setEncoding("utf8").on("data", (text: string) => {
    stdoutLength += text.length;
    if (stdoutLength > stdoutLimit) {
      overflow = true;
      child.kill("SIGKILL");
    } else stdout.push(text);
  });
  child.stderr!.setEncoding("utf8").on("data", (text: string) => {
    stderr = (stderr + text).slice(-stderrLimit);
    onStderr?.(text);
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  try {
    await spawned(child);
  } catch (err) {
    return { kind: "failed", error: `cannot run ${command.join(" ")}: ${(err as Error).message}` };
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), timeoutMs)));
  const code = await Promise.race([exited, timedOut]).finally(() => clearTimeout(timer));
  if (code === "timeout") {
    child.kill("SIGKILL");
    return { kind: "failed", error: `${name} did not answer within ${timeoutMs / 1000} s` };
  }
  if (overflow) return { kind: "failed", error: `${name} printed more than ${Math.round(stdoutLimit / 2 ** 20)} MB` };
  return { kind: "exited", stdout: stdout.join(""), stderr, code };
}

/** The first line of a failed command's error output, without the CLI's `svc: ` prefix. */
export function firstErrorLine(stderr: string): string | undefined {
  return (
    stderr
      .trim()
      .split("\n")[0]
      ?.replace(/^svc: /, "") || undefined
  );
}
