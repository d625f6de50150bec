/**
 * Where the project's `svc` CLI is (DESIGN.md section 2, "Who ships what"): the workspace's own
 * `node_modules/svc-studio` first (the npm package that provides the `svc` command), then an `svc` installed on PATH — like the ESLint and Vitest extensions use
 * the workspace's package. It always runs as `node <cli.mjs>` under the user's Node, never through the
 * `.bin` shim: on Windows that is `svc.cmd`, which Node refuses to spawn without a shell (`spawn EINVAL`),
 * and the editor's own runtime is not the one native modules were built for.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import { nodeExecutable } from "../../sdk/nodeRuntime.js";
import { PACKAGE_NAME } from "../../sdk/packageRoot.js";
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
  if (folder) {
    const local = p.join(folder, "node_modules", PACKAGE_NAME, "dist", "cli.mjs");
    if (host.exists(local)) return { command: nodeScriptCommand(local, host.node() ?? "node"), source: "workspace" };
    const linked = host.platform === "win32" ? undefined : posixBinCommand(p.join(folder, "node_modules", ".bin"), host, p);
    if (linked) return { command: linked, source: "workspace" };
  }
  const pathVar = host.env.PATH ?? host.env.Path ?? "";
  for (const dir of pathVar.split(p.delimiter).filter(Boolean)) {
    const command = host.platform === "win32" ? windowsGlobalCommand(dir, host, p) : posixBinCommand(dir, host, p);
    if (command) return { command, source: "path" };
  }
  return undefined;
}

/** npm's global layout on Windows: `<prefix>\svc.cmd` next to `<prefix>\node_modules\svc-studio`. */
function windowsGlobalCommand(dir: string, host: CliHost, p: path.PlatformPath): SvcCommand | undefined {
  const script = p.join(dir, "node_modules", PACKAGE_NAME, "dist", "cli.mjs");
  return host.exists(p.join(dir, "svc.cmd")) && host.exists(script) ? nodeScriptCommand(script, host.node() ?? "node") : undefined;
}

/**
 * `<dir>/svc` on macOS and Linux: npm links it to the package's cli.mjs, which runs under node; another
 * package manager's shell shim runs as itself (POSIX spawns a script with a shebang).
 */
function posixBinCommand(dir: string, host: CliHost, p: path.PlatformPath): SvcCommand | undefined {
  const bin = p.join(dir, "svc");
  if (!host.exists(bin)) return undefined;
  let target: string;
  try {
    target = host.realpath(bin);
  } catch {
    return undefined;
  }
  return /\.[cm]?js$/.test(target) ? nodeScriptCommand(target, host.node() ?? "node") : [bin];
}
