/**
 * The Node.js that svc's own processes (the cloud daemon, the CLI) run under. Inside VS Code the calling process is
 * Electron: `process.execPath` would start a second VS Code, not Node, and native modules (better-sqlite3,
 * node-llama-cpp) are built for the user's Node. So under Electron the user's `node` is used: `SVC_NODE`, else the
 * first `node` on PATH; with neither, a clear error instead of a wrong runtime.
 */
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";

export function nodeExecutable(
  env: NodeJS.ProcessEnv = process.env,
  versions: NodeJS.ProcessVersions = process.versions,
  platform: NodeJS.Platform = process.platform,
): string {
  if (!versions.electron) return process.execPath;
  if (env.SVC_NODE) return env.SVC_NODE;
  const names = platform === "win32" ? ["node.exe", "node.cmd"] : ["node"];
  for (const dir of (env.PATH ?? env.Path ?? "").split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate)) return candidate;
    }
  }
  throw new Error(
    "svc needs Node.js 20.15 or later to start its local cloud, and this process is VS Code's own runtime (Electron), which cannot run it. " +
      "Install Node.js so `node` is on PATH, or set SVC_NODE to its path.",
  );
}

function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
