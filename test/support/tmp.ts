// Temporary folders for tests: each test gets a fresh one and removes it when done, so runs
// never see each other's files and nothing is left in /tmp after a passing run.
import { mkdtemp, rm } from "node:fs/promises";
import { rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

export interface TempDir {
  readonly path: string;
  /** Removes the folder and everything in it; safe to call twice. */
  remove(): Promise<void>;
}

// Folders still present when the process exits (a test crashed before its cleanup) are removed
// synchronously then, unless SVC_KEEP_TMP=1 asks to keep them for a post-mortem.
const pending = new Set<string>();
process.on("exit", () => {
  if (process.env.SVC_KEEP_TMP === "1") return;
  for (const dir of pending) rmSync(dir, { recursive: true, force: true });
});

/** Creates `$TMPDIR/svc-<prefix>-XXXXXX`. */
export async function createTempDir(prefix: string): Promise<TempDir> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `svc-${prefix}-`));
  pending.add(dir);
  return {
    path: dir,
    async remove() {
      pending.delete(dir);
      if (process.env.SVC_KEEP_TMP === "1") return;
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Runs `fn` with a fresh temp folder and removes it afterwards, whether `fn` threw or not. */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>): Promise<T> {
  const tmp = await createTempDir(prefix);
  try {
    return await fn(tmp.path);
  } finally {
    await tmp.remove();
  }
}
