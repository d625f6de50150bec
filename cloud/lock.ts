/**
 * One cloud process per data dir. The lock file holds the owner's pid; a lock whose pid is no
 * longer alive (the owner was killed) is taken over, so kill -9 never wedges the data dir.
 *
 * The lock file is never seen empty or half written: the pid is written to a file of this
 * process's own first and hard-linked into place, which fails if the lock exists (one winner,
 * atomically, on every OS and file system that has hard links). Taking over a dead owner's lock
 * happens under a second lock (`cloud.lock.break`, held for a few file operations), inside which
 * the owner is read again before the file is removed, so two starters that both saw the same dead
 * owner cannot remove each other's fresh lock.
 */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`another svc cloud (pid ${pid}) is already using the data dir ${dataDir}; stop it with \`svc cloud stop\` or use --data`);
  }
}

/** A break lock older than this was left by a process that died while breaking (it is held for milliseconds). */
const ABANDONED_BREAK_MS = 5_000;
/** A lock file with no pid in it (left by an older svc killed while writing it) is stale once this old. */
const UNREADABLE_STALE_MS = 5_000;

export async function acquireDataDirLock(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, "cloud.lock");
  const deadline = Date.now() + 30_000;
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    if (await publishPid(file)) {
      return async () => {
        const owner = await readPid(file);
        if (owner === process.pid) await fs.rm(file, { force: true });
      };
    }
    const owner = await readPid(file);
    if (owner !== null && owner !== process.pid && isAlive(owner)) throw new DataDirLockedError(dataDir, owner);
    // Gone (released meanwhile), dead, or (an older svc's) empty: take it over if it is still the same.
    if (owner !== null || (await olderThan(file, UNREADABLE_STALE_MS))) await breakStaleLock(file, owner);
    if (Date.now() > deadline) throw new Error(`could not lock the data dir ${dataDir}: remove ${file} if no svc cloud is running`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Creates `file` holding this pid, complete, or returns false if it exists. */
async function publishPid(file: string): Promise<boolean> {
  const temp = `${file}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  await fs.writeFile(temp, String(process.pid), { mode: 0o600 });
  try {
    await fs.link(temp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw err;
  } finally {
    await fs.rm(temp, { force: true });
  }
}

/**
 * Removes the lock of a dead owner (`stale`, or null for an unreadable one) if it still holds that
 * owner once the break lock is held. Another starter breaking it meanwhile: nothing to do here, the
 * caller retries.
 */
async function breakStaleLock(file: string, stale: number | null): Promise<void> {
  const breaker = `${file}.break`;
  if (!(await publishPid(breaker))) {
    if (await olderThan(breaker, ABANDONED_BREAK_MS)) await fs.rm(breaker, { force: true });
    return;
  }
  try {
    const owner = await readPid(file);
    if (owner === stale) await fs.rm(file, { force: true });
  } finally {
    await fs.rm(breaker, { force: true });
  }
}

async function readPid(file: string): Promise<number | null> {
  const text = await fs.readFile(file, "utf8").catch(() => "");
  const pid = Number.parseInt(text, 10);
  return Number.isFinite(pid) && pid > 0 ? pid : null;
}

async function olderThan(file: string, ms: number): Promise<boolean> {
  const stat = await fs.stat(file).catch(() => null);
  return stat !== null && Date.now() - stat.mtimeMs > ms;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
