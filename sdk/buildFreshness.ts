/**
 * Whether a project's trainer bundle (`.svc/build/index.mjs`) is older than its sources. The bundle
 * is reused as it is (SPEC section 4), so a user who edits `src/svc/` must be told that a run would
 * use the old build: the build records the files it read (`src/svc/` and what they import) with a
 * hash of each, and a source is changed when its hash differs or it is gone. Hashes, not mtimes: a
 * checkout or an editor's save-without-change does not make a build stale.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { trainerBundlePath } from "./paths.js";

/** Next to the bundle: `{ "files": { "<path relative to the project>": "<sha256>" } }`. */
export const buildInputsPath = (projectDir: string): string => path.join(path.dirname(trainerBundlePath(projectDir)), "inputs.json");

const hashFile = (file: string): string | undefined => {
  try {
    return createHash("sha256").update(readFileSync(file)).digest("hex");
  } catch {
    return undefined;
  }
};

/** Records the source files a build read (absolute paths, or relative to the project). */
export function recordBuildInputs(projectDir: string, inputs: string[]): void {
  const files: Record<string, string> = {};
  for (const input of inputs) {
    const absolute = path.resolve(projectDir, input);
    const relative = path.relative(projectDir, absolute).split(path.sep).join("/");
    const hash = hashFile(absolute);
    if (hash !== undefined) files[relative] = hash;
  }
  writeFileSync(buildInputsPath(projectDir), JSON.stringify({ files }, null, 1) + "\n");
}

/** Every file under `dir`, skipping dot folders and node_modules. */
function filesUnder(dir: string): string[] {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    if (entry.name.startsWith(".") || entry.name === "node_modules") return [];
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(full) : [full];
  });
}

/**
 * The sources (relative to the project, `/`-separated) that changed since the bundle was built;
 * empty when it is up to date, `undefined` when there is no bundle (the next reader builds one).
 */
export function changedBuildSources(projectDir: string): string[] | undefined {
  const bundle = trainerBundlePath(projectDir);
  if (!existsSync(bundle)) return undefined;
  let recorded: Record<string, string> | undefined;
  try {
    recorded = (JSON.parse(readFileSync(buildInputsPath(projectDir), "utf8")) as { files?: Record<string, string> }).files;
  } catch {
    recorded = undefined;
  }
  if (recorded)
    return Object.entries(recorded)
      .filter(([file, hash]) => hashFile(path.join(projectDir, file)) !== hash)
      .map(([file]) => file);
  // A bundle built before inputs were recorded: any file of src/svc/ written after it.
  const builtAt = statSync(bundle).mtimeMs;
  return filesUnder(path.join(projectDir, "src", "svc"))
    .filter((file) => statSync(file).mtimeMs > builtAt)
    .map((file) => path.relative(projectDir, file).split(path.sep).join("/"));
}
