/**
 * Where the project's `svc` CLI is (DESIGN.md section 2, "Who ships what"): the workspace's own
 * `node_modules/svc` first, then an `svc` installed on PATH — like the ESLint and Vitest extensions use
 * the workspace's package. It always runs as `node <cli.mjs>` under the user's Node, never through the
 * `.bin` shim: on Windows that is `svc.cmd`, which Node refuses to spawn without a shell (`spawn EINVAL`),
 * and the editor's own runtime is not the one native modules were built for.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { nodeExecutable } from "../../sdk/nodeRuntime.js";
import { nodeScriptCommand, type NodeScriptCommand } from "../../sdk/platform/nodeChild.js";

/** argv prefix that runs the CLI (the studio's `svcCommand`): `[node, .../svc/dist/cli.mjs]`. */
export type SvcCommand = NodeScriptCommand;

export interface ResolvedCli {
  command: SvcCommand;
  /** Shown in the Output channel and the welcome view, so users know which svc runs. */
  source: "workspace" | "path";
}

/** What resolving looks at; the running machine by default, another OS's in tests. */
export interface CliHost {
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
  exists: (file: string) => boolean;
  /** Follows a symlink (npm's `bin/svc` on macOS and Linux points at the package's cli.mjs). */
  realpath: (file: string) => string;
  /** The user's Node; undefined when there is none (the command then fails with a clear ENOENT for `node`). */
  node: () => string | undefined;
}

const hostCli = (): CliHost => ({
  env: process.env,
  platform: process.platform,
  exists: existsSync,
  realpath: realpathSync,
  node: () => {
    try {
      return nodeExecutable();
    } catch {
      return undefined;
    }
  },
});

export function resolveSvcCli(folder: string | undefined, overrides: Partial<CliHost> = {}): ResolvedCli | undefined {
  const host = { ...hostCli(), ...overrides };
  const p = host.platform === "win32" ? path.win32 : path.posix;
  const command = (script: string): SvcCommand => nodeScriptCommand(script, host.node() ?? "node");
  if (folder) {
    const local = p.join(folder, "node_modules", "svc", "dist", "cli.mjs");
    if (host.exists(local)) return { command: command(local), source: "workspace" };
  }
  const pathVar = host.env.PATH ?? host.env.Path ?? "";
  for (const dir of pathVar.split(p.delimiter).filter(Boolean)) {
    const script = globalCliScript(dir, host, p);
    if (script) return { command: command(script), source: "path" };
  }
  return undefined;
}

/**
 * The cli.mjs behind an `svc` on PATH. npm's global layout: on Windows `<prefix>\svc.cmd` next to
 * `<prefix>\node_modules\svc`; elsewhere `<prefix>/bin/svc`, a symlink to the package's cli.mjs.
 */
function globalCliScript(dir: string, host: CliHost, p: path.PlatformPath): string | undefined {
  if (host.platform === "win32") {
    const script = p.join(dir, "node_modules", "svc", "dist", "cli.mjs");
    return host.exists(p.join(dir, "svc.cmd")) && host.exists(script) ? script : undefined;
  }
  const bin = p.join(dir, "svc");
  if (!host.exists(bin)) return undefined;
  try {
    return host.realpath(bin);
  } catch {
    return undefined;
  }
}
