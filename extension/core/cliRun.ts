/**
 * Short `svc` subcommands run by the extension as children under the user's Node (`svc cloud
 * start`): never in the extension host, which is not the runtime native modules were built for.
 */
import { spawnNodeCommand } from "../../sdk/platform/nodeChild.js";
import type { SvcCommand } from "./svcCli.js";

export interface CliResult {
  code: number | null;
  output: string;
}

export function runSvc(command: SvcCommand, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnNodeCommand(command, args, { cwd, env: { ...env, NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout!.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.stderr!.setEncoding("utf8").on("data", (text: string) => (output += text));
    child.once("error", reject);
    child.once("close", (code) => resolve({ code, output }));
  });
}

/**
 * Makes sure a cloud answers before anything mints credentials: with no `SVC_CLOUD_URL`, the SDK
 * would otherwise start the daemon from the calling process — here, the extension host.
 * `svc cloud start` is a no-op when the daemon already runs.
 */
export async function ensureCloudRunning(command: SvcCommand, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<void> {
  if (env.SVC_CLOUD_URL) return;
  const result = await runSvc(command, ["cloud", "start"], cwd, env);
  if (result.code !== 0) throw new Error(`svc cloud start failed: ${result.output.trim().split("\n").at(-1) ?? `exit ${result.code}`}`);
}
