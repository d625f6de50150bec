/**
 * An exclusive lock between processes on one machine: a file holding its owner's pid (the cloud's data dir, a
 * credentials refresh). A lock whose owner is gone (killed, crashed) is taken over, so a crash never wedges the next
 * process; with `staleMs`, so is one held longer than that by a live owner (a hung refresh).
 *
 * The lock file is never seen empty or half written: the pid is written to a file of this process's own first and
 * hard-linked into place, which fails if the lock exists (one winner, atomically, on every OS and file system that has
 * hard links). Taking over a lock happens under a second lock (`<file>.break`, held for a few file operations), inside
 * which the owner is read again before the file is removed, so two starters that both saw the same dead owner cannot
 * remove each other's fresh lock.
 */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";

/** A live process holds the lock (after `waitMs`, when waiting). */
export class FileLockHeldError extends Error {
  constructor(
    readonly file: string,
    readonly pid: number,
  ) {
    super(`${file} is held by another svc process (pid ${pid}); remove it if no svc command is running`);
  }
}

export interface FileLockOptions {
  /** How long to wait for a live owner to release it; 0 (the default): not at all. */
  waitMs?: number;
  /** A lock older than this is taken over even though its owner lives; default: never. */
  staleMs?: number;
}

/** A break lock older than this was left by a process that died while breaking (it is held for milliseconds). */
const ABANDONED_BREAK_MS = 5_000;
/** A lock file with no pid in it (left by an older svc killed while writing it) is stale once this old. */
const UNREADABLE_STALE_MS = 5_000;
/** Retrying a lock that keeps changing hands (released, broken) gives up after this long. */
const RETRY_MS = 30_000;

/** The locks this process holds: a lock naming this pid that is not among them was left by an earlier process with our pid. */
const held = new Set<string>();

/** Takes the lock `file`; resolves with its release. */
export async function acquireFileLock(file: string, options: FileLockOptions = {}): Promise<() => Promise<void>> {
  const waitUntil = Date.now() + (options.waitMs ?? 0);
  const deadline = Math.max(waitUntil, Date.now() + RETRY_MS);
  const staleMs = options.staleMs ?? Number.POSITIVE_INFINITY;
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  for (let pause = 5; ; pause = Math.min(pause * 2, 100)) {
    if (await publishPid(file)) {
      held.add(file);
      return async () => {
        held.delete(file);
        if ((await readPid(file)) === process.pid) await fs.rm(file, { force: true });
      };
    }
    const owner = await readPid(file);
    const live = owner !== null && (owner === process.pid ? held.has(file) : isAlive(owner)) && !(await olderThan(file, staleMs));
    if (live) {
      if (Date.now() >= waitUntil) throw new FileLockHeldError(file, owner);
      // The owner holds it for the length of one HTTP call: wait for it (no event to wait on across processes).
    } else if (owner !== null || (await olderThan(file, UNREADABLE_STALE_MS))) {
      // Dead, hung, or (an older svc's) empty: take it over if it is still the same.
      await breakStaleLock(file, owner);
    }
    if (Date.now() > deadline) throw new Error(`could not take the lock ${file}: remove it if no svc process is running`);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
}

/** Runs `fn` holding `<file>.lock`, waiting up to a minute for another process's turn. */
export async function withFileLock<T>(file: string, fn: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const release = await acquireFileLock(`${file}.lock`, { waitMs: 60_000, staleMs: 30_000, ...options });
  try {
    return await fn();
  } finally {
    await release();
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
 * Removes the lock of a dead owner (`stale`, or null for an unreadable one) if it still holds that owner once the
 * break lock is held. Another starter breaking it meanwhile: nothing to do here, the caller retries.
 */
async function breakStaleLock(file: string, stale: number | null): Promise<void> {
  const breaker = `${file}.break`;
  if (!(await publishPid(breaker))) {
    if (await olderThan(breaker, ABANDONED_BREAK_MS)) await fs.rm(breaker, { force: true });
    return;
  }
  try {
    if ((await readPid(file)) === stale) await fs.rm(file, { force: true });
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
