/** Small file helpers with the semantics credentials and state files need. */
import { promises as fs, readFileSync } from "node:fs";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { renameReplacing } from "./platform/rename.js";

/**
 * Writes via a temp file in the same folder and a rename, so readers see the old or the new file,
 * never half of one. Mode 0600 by default: these files hold tokens.
 */
export async function writeFileAtomic(file: string, content: string, mode = 0o600): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    await fs.writeFile(temp, content, { mode });
    await fs.chmod(temp, mode);
    await renameReplacing(temp, file);
  } catch (err) {
    await fs.rm(temp, { force: true });
    throw err;
  }
}

export async function readJsonFile<T>(file: string): Promise<T | null> {
  let text: string;
  try {
    // Synchronous on purpose: these are small local files (credentials, project state, daemon
    // info) that a studio request reads up to three of. An async read is four thread-pool round
    // trips, each costing far more than reading such a file, and they queue behind one another on
    // a busy machine.
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${file} is not valid JSON; fix or delete it`);
  }
}
