/**
 * Target → backend resolution kept in memory (issue 15), on a real SQLite store with the real
 * resolver: within its TTL a change made behind the cache's back (what another cloud process does)
 * is not read again; a base-model change notification drops every entry at once; past the TTL the
 * rows are read again; a target that cannot be served yet is never kept. The clock is moved by
 * the test instead of waited for.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import type { CloudContext } from "../../../cloud/context.js";
import { DeploymentChangeNotifier } from "../../../cloud/edge/changeNotifier.js";
import { BackendCache } from "../../../cloud/inference/backendCache.js";
import { resolveBackend } from "../../../cloud/inference/targets.js";
import { InferenceError } from "../../../cloud/inference/types.js";
import { openStore, type StoreInfo } from "../../../cloud/store/db.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";

const TTL = 1000;
const CREATED = "2026-01-01T00:00:00.000Z";

describe("inference: backend cache", () => {
  let tmp: TempDir;
  let store: StoreInfo;
  let ctx: CloudContext;
  let clock: number;
  let cache: BackendCache;

  beforeEach(async () => {
    tmp = await createTempDir("backend-cache");
    store = await openStore({ dataDir: tmp.path });
    // Only jobs, artifacts and base models matter here; the job's owners are left out.
    await sql`PRAGMA foreign_keys = OFF`.execute(store.db);
    await store.db
      .insertInto("base_models")
      .values({ name: "m", source: "local", path: "/models/m-v1.gguf", upstream_url: null, adapter_model: null, trainable: 1, created_at: CREATED })
      .execute();
    await store.db
      .insertInto("jobs")
      .values({
        id: "j1",
        project_id: "p1",
        name: "job",
        status: "running",
        config: JSON.stringify({ model: "m" }),
        dataset_id: null,
        eval_dataset_id: null,
        artifact_count: 0,
        error: null,
        last_seq: 0,
        worker_id: null,
        claim: 0,
        worker_seq: 0,
        created_at: CREATED,
        started_at: null,
        finished_at: null,
      })
      .execute();
    ctx = { db: store.db, dialect: store.dialect, deploymentChanges: new DeploymentChangeNotifier() } as CloudContext;
    clock = 0;
    cache = new BackendCache(
      (target) => resolveBackend(ctx, target),
      ctx.deploymentChanges,
      TTL,
      () => clock,
    );
  });
  afterEach(async () => {
    cache.close();
    await store.close();
    await tmp.remove();
  });

  const base = { kind: "base_model", name: "m" } as const;
  const adapter = { kind: "adapter", jobId: "j1" } as const;
  /** What another cloud process would do: change the row without notifying this one. */
  const moveWeights = (path: string) => store.db.updateTable("base_models").set({ path }).where("name", "=", "m").execute();
  const modelPath = async (target: typeof base | typeof adapter) => {
    const backend = await cache.get(target);
    assert.equal(backend.kind, "local");
    return backend.modelPath;
  };

  it("answers from memory within the TTL and reads the rows again after it", async () => {
    assert.equal(await modelPath(base), "/models/m-v1.gguf");
    await moveWeights("/models/m-v2.gguf");
    clock = TTL - 1;
    assert.equal(await modelPath(base), "/models/m-v1.gguf");
    clock = TTL;
    assert.equal(await modelPath(base), "/models/m-v2.gguf");
  });

  it("drops every target when a base model changes, and keeps them through a deployment's own change", async () => {
    assert.equal(await modelPath(base), "/models/m-v1.gguf");
    await moveWeights("/models/m-v2.gguf");
    ctx.deploymentChanges.changed("some-slug");
    assert.equal(await modelPath(base), "/models/m-v1.gguf");
    ctx.deploymentChanges.changedAll();
    assert.equal(await modelPath(base), "/models/m-v2.gguf");
  });

  it("never keeps a target that cannot be served yet: the adapter is found as soon as it exists", async () => {
    await assert.rejects(cache.get(adapter), (err: InferenceError) => err.status === 503 && /job j1 has no a final adapter/.test(err.message));
    assert.equal(cache.size, 0);
    await store.db
      .insertInto("artifacts")
      .values({ id: "a1", job_id: "j1", kind: "adapter", step: 10, name: "adapter.safetensors", path: "/data/j1/adapter", size_bytes: 1, created_at: CREATED })
      .execute();
    const backend = await cache.get(adapter);
    assert.deepEqual(backend, { kind: "local", modelPath: "/models/m-v1.gguf", adapterPath: "/data/j1/adapter" });
  });

  it("shares one resolution between lookups of a target made while it runs", async () => {
    const first = cache.get(base);
    assert.equal(cache.get({ kind: "base_model", name: "m" }), first);
    await first;
  });
});
