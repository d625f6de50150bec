/**
 * The edge's deployment cache (issue 15) on a real SQLite store: within half its TTL it answers
 * from memory; after that it still answers at once with the state it holds while a reload runs in
 * the background; and a reload that was running when the control plane reported a change never
 * replaces what that change loaded (else a revoked key could come back). The clock is moved by
 * the test instead of waited for.
 */
import assert from "node:assert/strict";
import { sql } from "kysely";
import type { CloudContext } from "../../../cloud/context.js";
import { DeploymentChangeNotifier } from "../../../cloud/edge/changeNotifier.js";
import { DeploymentCache } from "../../../cloud/edge/deploymentCache.js";
import type { Backend } from "../../../cloud/inference/index.js";
import { openStore, type StoreInfo } from "../../../cloud/store/db.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";

const TTL = 1000;
const BACKEND: Backend = { kind: "upstream", baseUrl: "http://127.0.0.1:9/v1", model: "m" };

describe("edge: deployment cache", () => {
  let tmp: TempDir;
  let store: StoreInfo;
  let ctx: CloudContext;
  let clock: number;
  let resolved: number;
  let cache: DeploymentCache;

  beforeEach(async () => {
    tmp = await createTempDir("deployment-cache");
    store = await openStore({ dataDir: tmp.path });
    // Only the deployments and keys tables matter here; their owners (orgs, projects) are left out.
    await sql`PRAGMA foreign_keys = OFF`.execute(store.db);
    await store.db
      .insertInto("deployments")
      .values({
        id: "d1",
        project_id: "p1",
        slug: "bot",
        target_kind: "base_model",
        target_job_id: null,
        target_step: null,
        target_model: "m",
        auth_mode: "fixed_api_key",
        enabled: 1,
        custom_domain: null,
        run_retention_mode: "none",
        run_retention_days: 0,
        created_at: "2026-01-01T00:00:00.000Z",
        updated_at: "2026-01-01T00:00:00.000Z",
        deleted_at: null,
      })
      .execute();
    ctx = { db: store.db, dialect: store.dialect, deploymentChanges: new DeploymentChangeNotifier() } as CloudContext;
    clock = 0;
    resolved = 0;
    cache = new DeploymentCache(
      ctx,
      TTL,
      async () => ((resolved += 1), BACKEND),
      () => clock,
    );
  });
  afterEach(async () => {
    cache.close();
    await store.close();
    await tmp.remove();
  });

  /** What another cloud process would do: change the row without notifying this one. */
  const setAuthMode = (mode: string) => store.db.updateTable("deployments").set({ auth_mode: mode }).where("id", "=", "d1").execute();

  it("answers from memory, with the backend resolved once per load", async () => {
    const first = await cache.get("bot");
    assert.deepEqual(first?.backend, BACKEND);
    await setAuthMode("none");
    clock = TTL / 2 - 1;
    assert.equal(await cache.get("bot"), first);
    assert.equal(resolved, 1);
  });

  it("after half the TTL answers with the state it holds, and past the TTL only with one read after a change", async () => {
    const loading = cache.get("bot");
    assert.equal((await loading)?.authMode, "fixed_api_key");
    await setAuthMode("none");
    clock = TTL / 2;
    // The same (settled) answer: this request does not wait for the reload it starts.
    assert.equal(cache.get("bot"), loading);
    // Past the TTL of the first load, what is served was read after the change.
    clock = TTL + 1;
    assert.equal((await cache.get("bot"))?.authMode, "none");
  });

  it("never lets a reload running during a change notification replace the state loaded after it", async () => {
    await cache.get("bot");
    clock = TTL / 2;
    void cache.get("bot"); // starts the background reload
    ctx.deploymentChanges.changed("bot");
    const afterChange = cache.get("bot");
    await afterChange;
    // The reload queued its queries before this load did, so it has finished by now.
    assert.equal(cache.get("bot"), afterChange);
  });

  it("drops every slug when all deployments changed (a base model was replaced)", async () => {
    const first = cache.get("bot");
    await first;
    ctx.deploymentChanges.changedAll();
    assert.notEqual(cache.get("bot"), first);
  });

  it("stays at its bound under 10,000 random slugs, keeping the slug in use", async () => {
    const bounded = new DeploymentCache(
      ctx,
      TTL,
      async () => BACKEND,
      () => clock,
      1000,
    );
    try {
      const inUse = await bounded.get("bot");
      for (let i = 0; i < 10_000; i++) {
        assert.equal(await bounded.get(`random-${i.toString(36)}-${(i * 7919).toString(36)}`), null);
        if (i % 500 === 0) assert.equal(await bounded.get("bot"), inUse, "the slug in use is served from memory");
      }
      assert.equal(bounded.size, 1000);
      assert.equal(await bounded.get("bot"), inUse, "recent use kept it through the flood");
    } finally {
      bounded.close();
    }
  });

  it("neither looks up nor keeps slugs no deployment can have", async () => {
    for (const host of ["UPPER", "-dash", "a", "x".repeat(41), "evil.example.com", "bot/../x", ""]) {
      assert.equal(await cache.get(host), null, host);
    }
    assert.equal(cache.size, 0);
  });
});
