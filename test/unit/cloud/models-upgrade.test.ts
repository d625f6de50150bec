import assert from "node:assert/strict";
import path from "node:path";
import SQLite from "better-sqlite3";
import { Kysely, Migrator, SqliteDialect } from "kysely";
import type { CloudContext } from "../../../cloud/context.js";
import { fillMissingModelFacts, listModels } from "../../../cloud/domain/models.js";
import { openStore } from "../../../cloud/store/db.js";
import { MIGRATIONS } from "../../../cloud/store/migrations.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";
import { writeTinyModel } from "../../support/modelFiles.js";

/**
 * A cloud upgraded in place: its SQLite database was made by the first migration only, with a
 * GGUF registered the old way (no facts). Opening it adds the fact columns, and the start-up pass
 * reads the facts of the rows that lack them; a row whose file is gone stays as it was.
 */
describe("base models: upgrading a database registered before facts existed", () => {
  let tmp: TempDir;
  before(async () => {
    tmp = await createTempDir("models-upgrade");
  });
  after(async () => {
    await tmp?.remove();
  });

  it("adds the columns and fills in the facts of readable files", async () => {
    const qwen = await writeTinyModel(path.join(tmp.path, "qwen.gguf"), { architecture: "qwen3", name: "Qwen3 0.6B", fileType: 15, contextLength: 40960 });
    const old = new Kysely<any>({ dialect: new SqliteDialect({ database: new SQLite(path.join(tmp.path, "svc.db")) }) });
    const first = await new Migrator({ db: old, provider: { getMigrations: async () => ({ "0001_initial": MIGRATIONS["0001_initial"] }) } }).migrateToLatest();
    assert.equal(first.error, undefined);
    const oldRow = { source: "gguf", upstream_url: null, adapter_model: null, trainable: 0, created_at: "2026-01-01T00:00:00.000Z" };
    await old
      .insertInto("base_models")
      .values([
        { ...oldRow, name: "old-qwen", path: qwen.path },
        { ...oldRow, name: "gone", path: path.join(tmp.path, "deleted.gguf") },
      ])
      .execute();
    await old.destroy();

    const store = await openStore({ dataDir: tmp.path });
    try {
      const ctx = { db: store.db, dialect: store.dialect } as CloudContext;
      const before = await listModels(ctx);
      assert.deepEqual(
        before.map((m) => [m.name, m.architecture, m.trainable]),
        [
          ["gone", null, false],
          ["old-qwen", null, false],
        ],
      );
      assert.match(before[1].notTrainableReason ?? "", /header has not been read/);
      await fillMissingModelFacts(ctx);
      const [gone, upgraded] = await listModels(ctx);
      assert.deepEqual(
        {
          architecture: upgraded.architecture,
          parameters: upgraded.parameters,
          quantization: upgraded.quantization,
          contextLength: upgraded.contextLength,
          sizeBytes: upgraded.sizeBytes,
          trainable: upgraded.trainable,
        },
        { architecture: "qwen3", parameters: qwen.parameters, quantization: "Q4_K_M", contextLength: 40960, sizeBytes: qwen.sizeBytes, trainable: true },
      );
      assert.equal(gone.architecture, null, "a missing file is left for whoever uses it to report");
    } finally {
      await store.close();
    }
  });
});
