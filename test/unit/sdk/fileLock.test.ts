/**
 * The one file lock (sdk/fileLock.ts) the cloud's data dir and a credentials refresh share: one holder at a time in
 * this process too, a dead or hung owner's lock taken over, a live one waited for or named. Racing processes:
 * test/integration/data-dir-lock-race.test.ts.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { acquireFileLock, FileLockHeldError, withFileLock } from "../../../sdk/fileLock.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";

/** The pid of a process that has exited: what a killed owner leaves in its lock file. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  await new Promise((resolve) => child.once("exit", resolve));
  return child.pid!;
}

describe("file lock: one holder, dead and hung owners taken over", () => {
  let tmp: TempDir;
  let n = 0;
  const lockFile = () => path.join(tmp.path, `lock-${++n}`);
  before(async () => {
    tmp = await createTempDir("file-lock");
  });
  after(async () => tmp?.remove());

  it("runs callers one at a time, each waiting for the one before", async () => {
    const file = lockFile();
    let inside = 0;
    let most = 0;
    await Promise.all(
      Array.from({ length: 6 }, () =>
        withFileLock(file, async () => {
          most = Math.max(most, ++inside);
          await new Promise((resolve) => setTimeout(resolve, 10));
          inside--;
        }),
      ),
    );
    assert.equal(most, 1);
    assert.equal(existsSync(`${file}.lock`), false, "released");
  });

  it("holds the owner's pid from the moment it exists, and refuses a second taker by that pid", async () => {
    const file = lockFile();
    const release = await acquireFileLock(file);
    assert.equal(readFileSync(file, "utf8"), String(process.pid));
    await assert.rejects(acquireFileLock(file), (err: unknown) => err instanceof FileLockHeldError && err.pid === process.pid);
    await release();
    assert.equal(existsSync(file), false);
  });

  it("takes over the lock of a dead owner at once", async () => {
    const file = lockFile();
    writeFileSync(file, String(await deadPid()));
    const release = await acquireFileLock(file);
    assert.equal(readFileSync(file, "utf8"), String(process.pid));
    await release();
  });

  it("names a live owner, and waits for it when asked to", async () => {
    const file = lockFile();
    writeFileSync(file, String(process.ppid));
    await assert.rejects(acquireFileLock(file), (err: unknown) => err instanceof FileLockHeldError && err.pid === process.ppid);
    setTimeout(() => rmSync(file), 100).unref();
    const release = await acquireFileLock(file, { waitMs: 10_000 });
    assert.equal(readFileSync(file, "utf8"), String(process.pid));
    await release();
  });

  it("takes over an empty lock file (an older svc killed while writing it) once it is old", async () => {
    const file = lockFile();
    writeFileSync(file, "");
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const release = await acquireFileLock(file);
    assert.equal(readFileSync(file, "utf8"), String(process.pid));
    await release();
  });

  it("takes over a live owner's lock held longer than staleMs", async () => {
    const file = lockFile();
    writeFileSync(file, String(process.ppid));
    const old = new Date(Date.now() - 60_000);
    utimesSync(file, old, old);
    const release = await acquireFileLock(file, { staleMs: 30_000 });
    assert.equal(readFileSync(file, "utf8"), String(process.pid));
    await release();
  });

  it("leaves a fresh lock of a live owner alone within staleMs", async () => {
    const file = lockFile();
    writeFileSync(file, String(process.ppid));
    await assert.rejects(acquireFileLock(file, { staleMs: 30_000, waitMs: 50 }), FileLockHeldError);
    assert.equal(readFileSync(file, "utf8"), String(process.ppid));
  });
});
