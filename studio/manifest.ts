/**
 * `GET /api/manifest`: asks the project's CLI (`svc manifest --json`), which reuses or builds
 * `.svc/build/index.mjs` and imports it in that subprocess. Whatever goes wrong becomes the
 * `error` state, so the Run training panel reads `Couldn't read manifest: <error>`.
 */
import type { Manifest } from "../sdk/manifest.js";
import { changedBuildSources } from "../sdk/buildFreshness.js";
import { firstErrorLine, runSvcToEnd, type SvcCommand } from "./svcCommand.js";

const MANIFEST_TIMEOUT_MS = 60_000;
// stdout is the manifest line, and whatever the trainer's code prints while it is imported.
const OUTPUT_LIMIT = 8 * 2 ** 20;

/**
 * `rebuild`: build the bundle first. Without it the bundle is rebuilt only when its sources changed since it was
 * built, so reloading the panel picks up edits (SPEC section 4) and an unchanged project is not rebuilt.
 */
export async function readManifest(
  command: SvcCommand,
  projectDir: string,
  env: NodeJS.ProcessEnv = process.env,
  options: { rebuild?: boolean } = {},
): Promise<Manifest> {
  const rebuild = options.rebuild || Boolean(changedBuildSources(projectDir)?.length);
  const output = await runSvcToEnd(command, ["manifest", "--json", ...(rebuild ? ["--rebuild"] : [])], projectDir, env, {
    timeoutMs: MANIFEST_TIMEOUT_MS,
    stdoutLimit: OUTPUT_LIMIT,
  });
  if (output.kind === "failed") return { status: "error", error: output.error };
  return parseManifestOutput(output.stdout, output.stderr, output.code);
}

/** The last JSON line the CLI printed; otherwise the first line of its error output. */
export function parseManifestOutput(stdout: string, stderr: string, exitCode: number | null): Manifest {
  const lines = stdout
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.startsWith("{"));
  for (const line of lines.reverse()) {
    try {
      const value = JSON.parse(line) as Manifest;
      if (value.status === "ok" || value.status === "none" || value.status === "error") return value;
    } catch {
      // Not the manifest line: keep looking.
    }
  }
  const reason = firstErrorLine(stderr) ?? `svc manifest exited with code ${exitCode}`;
  return { status: "error", error: reason };
}
