/**
 * `GET /api/manifest`: asks the project's CLI (`svc manifest --json`), which reuses or builds
 * `.svc/build/index.mjs` and imports it in that subprocess. Whatever goes wrong becomes the
 * `error` state, so the Run training panel reads `Couldn't read manifest: <error>`.
 */
import type { Manifest } from "../sdk/manifest.js";
import { spawnSvc, spawned, type SvcCommand } from "./svcCommand.js";

const MANIFEST_TIMEOUT_MS = 60_000;
const OUTPUT_LIMIT = 256 * 1024;

export async function readManifest(command: SvcCommand, projectDir: string, env: NodeJS.ProcessEnv = process.env): Promise<Manifest> {
  const child = spawnSvc(command, ["manifest", "--json"], projectDir, env);
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (text: string) => (stdout = (stdout + text).slice(-OUTPUT_LIMIT)));
  child.stderr!.setEncoding("utf8").on("data", (text: string) => (stderr = (stderr + text).slice(-OUTPUT_LIMIT)));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  try {
    await spawned(child);
  } catch (err) {
    return { status: "error", error: `cannot run ${command.join(" ")}: ${(err as Error).message}` };
  }
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), MANIFEST_TIMEOUT_MS)));
  const code = await Promise.race([exited, timedOut]).finally(() => clearTimeout(timer));
  if (code === "timeout") {
    child.kill("SIGKILL");
    return { status: "error", error: `svc manifest did not answer within ${MANIFEST_TIMEOUT_MS / 1000} s` };
  }
  return parseManifestOutput(stdout, stderr, code);
}

/** The last JSON line the CLI printed; otherwise the first line of its error output. */
export function parseManifestOutput(stdout: string, stderr: string, exitCode: number | null): Manifest {
  const lines = stdout.split("\n").map((line) => line.trim()).filter((line) => line.startsWith("{"));
  for (const line of lines.reverse()) {
    try {
      const value = JSON.parse(line) as Manifest;
      if (value.status === "ok" || value.status === "none" || value.status === "error") return value;
    } catch {
      // Not the manifest line: keep looking.
    }
  }
  const reason = stderr.trim().split("\n")[0]?.replace(/^svc: /, "") || `svc manifest exited with code ${exitCode}`;
  return { status: "error", error: reason };
}
