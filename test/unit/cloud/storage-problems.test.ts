import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { probeDataDir, StorageHealth, storageProblemOf } from "../../../cloud/http/storageHealth.js";

describe("storage problems: which errors are a full or read-only store", () => {
  it("reads errno codes, SQLite codes and PostgreSQL SQLSTATEs, also when wrapped", () => {
    const coded = (code: string) => Object.assign(new Error(code), { code });
    assert.equal(storageProblemOf(coded("ENOSPC")), "full");
    assert.equal(storageProblemOf(coded("SQLITE_FULL")), "full");
    assert.equal(storageProblemOf(coded("53100")), "full");
    assert.equal(storageProblemOf(coded("EROFS")), "read_only");
    assert.equal(storageProblemOf(coded("SQLITE_READONLY")), "read_only");
    assert.equal(storageProblemOf(coded("SQLITE_READONLY_CANTINIT")), "read_only");
    assert.equal(storageProblemOf(coded("25006")), "read_only");
    assert.equal(storageProblemOf(new Error("insert failed", { cause: coded("ENOSPC") })), "full");
    assert.equal(storageProblemOf(coded("ENOENT")), undefined);
    assert.equal(storageProblemOf(coded("23505")), undefined, "a unique violation is not a storage problem");
    assert.equal(storageProblemOf("ENOSPC"), undefined);
  });

  it("a read-only episode: a 507 that says so, logged once, not ready until the probe writes again", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "svc-storage-"));
    const logged: string[] = [];
    let writable = false;
    // Test double, named so: the probe's outcome is set by the test, as a read-only mount cannot be made under it.
    const health = new StorageHealth(
      dir,
      (line) => logged.push(line),
      async () => {
        if (!writable) throw Object.assign(new Error("read-only file system"), { code: "EROFS" });
        await probeDataDir(dir);
      },
    );
    try {
      assert.equal(await health.notReadyReason(), undefined);
      const first = health.refuse("read_only", new Error("EROFS: read-only file system, open"));
      health.refuse("read_only", new Error("again"));
      assert.equal(first.status, 507);
      assert.equal(first.code, "storage_read_only");
      assert.match(first.message, /read-only file system or database; make it writable and retry/);
      assert.equal(logged.length, 1);
      assert.match((await health.notReadyReason()) ?? "", /read-only/);
      writable = true;
      assert.equal(await health.notReadyReason(), undefined);
      assert.match(logged[1], /accepts writes again/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
