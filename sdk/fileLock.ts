/**
 * An exclusive lock between processes on one machine: a `<file>.lock` created with O_EXCL that holds the owner's pid.
 * A lock whose owner is gone (crashed mid-refresh) or that is older than `staleMs` is taken over, so a crash never
 * wedges the next process.
 */
import { promises as fs } from "node:fs";
import path from "node:path";

export async function withFileLock<T>(file: string, fn: () => Promise<T>, options: { staleMs?: number; waitMs?: number } = {}): Promise<T> {
  const lock = `${file}.lock`;
  const staleMs = options.staleMs ?? 30_000;
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  await fs.mkdir(path.dirname(lock), { recursive: true, mode: 0o700 });
  for (let pause = 10; ; pause = Math.min(pause * 2, 200)) {
    try {
      await fs.writeFile(lock, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      if (await isStale(lock, staleMs)) {
        await fs.rm(lock, { force: true });
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lock} is held by another svc process; remove it if no svc command is running`);
      // Another process holds it for the length of one HTTP call: wait for it (no event to wait on across processes).
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lock, { force: true });
  }
}

async function isStale(lock: string, staleMs: number): Promise<boolean> {
  try {
    const [text, stat] = await Promise.all([fs.readFile(lock, "utf8"), fs.stat(lock)]);
    if (Date.now() - stat.mtimeMs > staleMs) return true;
    const pid = Number(text.trim());
    if (!Number.isInteger(pid) || pid <= 0) return false; // being written right now
    try {
      process.kill(pid, 0);
      return false;
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "ESRCH";
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return false; // released meanwhile: retry at once
    throw err;
  }
}
