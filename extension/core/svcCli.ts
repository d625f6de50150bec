/**
 * Where the project's `svc` CLI is (DESIGN.md section 2, "Who ships what"): the workspace's own
 * `node_modules/.bin/svc` first, then `svc` on PATH — like the ESLint and Vitest extensions use
 * the workspace's package. The CLI is a `#!/usr/bin/env node` script, so running it directly
 * puts the cloud, the trainer and every native module under the user's Node, never under the
 * editor's runtime.
 */
import { existsSync } from "node:fs";
import path from "node:path";

/** argv prefix that runs the CLI (the studio's `svcCommand`). */
export type SvcCommand = readonly [string, ...string[]];

export interface ResolvedCli {
  command: SvcCommand;
  /** Shown in the Output channel and the welcome view, so users know which svc runs. */
  source: "workspace" | "path";
}

const binaryNames = (platform: NodeJS.Platform): string[] => (platform === "win32" ? ["svc.cmd", "svc.exe", "svc"] : ["svc"]);

export function resolveSvcCli(
  folder: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  exists: (file: string) => boolean = existsSync,
  platform: NodeJS.Platform = process.platform,
): ResolvedCli | undefined {
  const names = binaryNames(platform);
  if (folder) {
    for (const name of names) {
      const local = path.join(folder, "node_modules", ".bin", name);
      if (exists(local)) return { command: [local], source: "workspace" };
    }
  }
  const pathVar = env.PATH ?? env.Path ?? "";
  for (const dir of pathVar.split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (exists(candidate)) return { command: [candidate], source: "path" };
    }
  }
  return undefined;
}
