/** One cloud process per data dir: `cloud.lock` (sdk/fileLock.ts), taken over from a killed owner, refused while one lives. */
import path from "node:path";
import { acquireFileLock, FileLockHeldError } from "../sdk/fileLock.js";

export class DataDirLockedError extends Error {
  constructor(
    readonly dataDir: string,
    readonly pid: number,
  ) {
    super(`another svc cloud (pid ${pid}) is already using the data dir ${dataDir}; stop it with \`svc cloud stop\` or use --data`);
  }
}

export async function acquireDataDirLock(dataDir: string): Promise<() => Promise<void>> {
  try {
    return await acquireFileLock(path.join(dataDir, "cloud.lock"));
  } catch (err) {
    if (err instanceof FileLockHeldError) throw new DataDirLockedError(dataDir, err.pid);
    throw err;
  }
}
