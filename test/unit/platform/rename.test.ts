import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { renameReplacing } from "../../../sdk/platform/rename.js";

/** A rename that fails with `code` the first `failures` times: the file another process holds open on Windows. */
function heldOpenRename(code: string, failures: number) {
  let calls = 0;
  const rename = async () => {
    calls++;
    if (calls <= failures) throw Object.assign(new Error(`${code}: operation not permitted, rename`), { code });
  };
  return { rename, calls: () => calls };
}

describe("platform: atomic renames on Windows retry a file held open for a moment", () => {
  const pauses: number[] = [];
  const pause = async (ms: number) => void pauses.push(ms);
  beforeEach(() => (pauses.length = 0));

  it("Windows: EPERM, EACCES and EBUSY are retried until the rename goes through", async () => {
    for (const code of ["EPERM", "EACCES", "EBUSY"]) {
      const held = heldOpenRename(code, 3);
      await renameReplacing("a.tmp", "a", { platform: "win32", rename: held.rename, pause });
      assert.equal(held.calls(), 4, code);
    }
    assert.deepEqual(pauses.slice(0, 3), [10, 20, 30]);
  });

  it("Windows: gives up after the last attempt with the rename's own error", async () => {
    const held = heldOpenRename("EPERM", 100);
    await assert.rejects(renameReplacing("a.tmp", "a", { platform: "win32", rename: held.rename, pause, attempts: 5 }), { code: "EPERM" });
    assert.equal(held.calls(), 5);
  });

  it("POSIX, and any other error: no retry (there the rename replaces at once, so the error is real)", async () => {
    const posix = heldOpenRename("EPERM", 1);
    await assert.rejects(renameReplacing("a.tmp", "a", { platform: "darwin", rename: posix.rename, pause }), { code: "EPERM" });
    assert.equal(posix.calls(), 1);
    const missing = heldOpenRename("ENOENT", 1);
    await assert.rejects(renameReplacing("a.tmp", "a", { platform: "win32", rename: missing.rename, pause }), { code: "ENOENT" });
    assert.equal(missing.calls(), 1);
  });

  it("on this machine, replaces the file", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "svc-rename-"));
    try {
      writeFileSync(path.join(dir, "a"), "old");
      writeFileSync(path.join(dir, "a.tmp"), "new");
      await renameReplacing(path.join(dir, "a.tmp"), path.join(dir, "a"));
      assert.equal(readFileSync(path.join(dir, "a"), "utf8"), "new");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
