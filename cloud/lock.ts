/**
 * One cloud process per data dir. The lock file holds the owner's pid; a lock whose pid is no
 * longer alive (the owner was killed) is taken over, so kill -9 never wedges the data dir.
 */
import { promises as fs } from "node:fs";
import path from "node:path";

export class DataDirLockedError extends Error {
  constructor(readonly dataDir: string, readonly pid: number) {
    super(`another svc cloud (pid ${pid}) is already using the data dir ${dataDir}; stop it with \`svc cloud stop\` or use --data`);
  }
}

export async function acquireDataDirLock(dataDir: string): Promise<() => Promise<void>> {
  const file = path.join(dataDir, "cloud.lock");
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const handle = await fs.open(file, "wx", 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      return async () => {
        const owner = await readPid(file);
        if (owner === process.pid) await fs.rm(file, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const owner = await readPid(file);
      if (owner !== null && owner !== process.pid && isAlive(owner)) throw new DataDirLockedError(dataDir, owner);
      await fs.rm(file, { force: true }); // stale: its owner is gone
    }
  }
  throw new Error(`could not lock the data dir ${dataDir}`);
}

async function readPid(file: string): Promise<number | null> {
  const text = await fs.readFile(file, "utf8").catch(() => "");
  const pid = Number.parseInt(text, 10);
  return Number.isFinite(pid) && pid > 0 ? pid : null;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
