/**
 * The rename behind every atomic write, made to hold on Windows. There a rename over a file another process has open
 * (an antivirus scan, the search indexer, a reader of `daemon.json`) fails for a moment with EPERM, EACCES or EBUSY,
 * where POSIX replaces the file at once; retrying for a short while is what npm and git do there.
 */
import { promises as fs } from "node:fs";

const TRANSIENT_ON_WINDOWS = new Set(["EPERM", "EACCES", "EBUSY"]);

export interface RenameOptions {
  platform?: NodeJS.Platform;
  rename?: (from: string, to: string) => Promise<void>;
  /** Tries in all, with a growing pause between them (10 ms, 20 ms, ... about 2 s in all). */
  attempts?: number;
  /** How to wait between tries (a timer in the product). */
  pause?: (ms: number) => Promise<void>;
}

export async function renameReplacing(from: string, to: string, options: RenameOptions = {}): Promise<void> {
  const { platform = process.platform, rename = fs.rename, attempts = 20, pause = (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)) } = options;
  for (let attempt = 1; ; attempt++) {
    try {
      return await rename(from, to);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? "";
      if (platform !== "win32" || !TRANSIENT_ON_WINDOWS.has(code) || attempt >= attempts) throw err;
      await pause(Math.min(10 * attempt, 200));
    }
  }
}
