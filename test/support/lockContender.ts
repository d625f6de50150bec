/**
 * A process that races for a data dir's lock on command (forked by data-dir-lock-race.test.ts):
 * `{ go: dir }` takes the lock with the cloud's own code and answers whether it holds it; the
 * holder keeps it until `{ release: true }`. Loaded once, so every round races only the lock.
 */
import { acquireDataDirLock, DataDirLockedError } from "../../cloud/lock.js";

let release: (() => Promise<void>) | null = null;

process.on("message", (message: { go?: string; release?: boolean }) => {
  void (async () => {
    if (message.go) {
      try {
        release = await acquireDataDirLock(message.go);
        process.send!({ pid: process.pid, held: true });
      } catch (err) {
        process.send!({ pid: process.pid, held: false, locked: err instanceof DataDirLockedError, error: (err as Error).message });
      }
    } else if (message.release) {
      await release?.();
      release = null;
      process.send!({ pid: process.pid, released: true });
    }
  })();
});
process.send!({ pid: process.pid, ready: true });
