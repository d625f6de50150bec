/**
 * What the edge needs to know about a deployment on every request (enabled, auth mode, key
 * hashes, target), cached per slug. An entry is dropped when the control plane reports a change
 * (same process: immediate) and otherwise lives at most `ttlMs` (other processes: the bound on
 * how late a revoked key or a disabled deployment can still be honoured). Lookups of the same
 * slug while a load is running share that load.
 */
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { targetOf } from "../domain/deployments.js";

export interface DeploymentState {
  id: string;
  slug: string;
  projectId: string;
  authMode: "fixed_api_key" | "none";
  target: DeploymentTarget;
  createdAt: string;
  /** SHA-256 hex of each enabled key → that key. */
  keys: Map<string, { id: string; hash: string }>;
  /** Display prefixes of the enabled keys (the failed-auth limiter keys its buckets by them). */
  keyPrefixes: Set<string>;
}

interface Entry {
  /** null: no servable deployment (unknown, disabled or deleted). */
  state: Promise<DeploymentState | null>;
  expiresAt: number;
}

export class DeploymentCache {
  private readonly entries = new Map<string, Entry>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctx: CloudContext,
    private readonly ttlMs: number,
  ) {
    this.unsubscribe = ctx.deploymentChanges.subscribe((slug) => this.entries.delete(slug));
  }

  get(slug: string): Promise<DeploymentState | null> {
    const now = Date.now();
    const cached = this.entries.get(slug);
    if (cached && cached.expiresAt > now) return cached.state;
    const entry: Entry = { state: this.load(slug), expiresAt: now + this.ttlMs };
    this.entries.set(slug, entry);
    // A failed load (database hiccup) must not be cached.
    entry.state.catch(() => this.entries.get(slug) === entry && this.entries.delete(slug));
    return entry.state;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
  }

  private async load(slug: string): Promise<DeploymentState | null> {
    const row = await this.ctx.db.selectFrom("deployments").selectAll().where("slug", "=", slug).executeTakeFirst();
    if (!row || row.deleted_at !== null || !Number(row.enabled)) return null;
    const keys = await this.ctx.db
      .selectFrom("deployment_keys")
      .select(["id", "key_hash", "prefix"])
      .where("deployment_id", "=", row.id)
      .where("enabled", "=", 1)
      .execute();
    return {
      id: row.id,
      slug: row.slug,
      projectId: row.project_id,
      authMode: row.auth_mode === "none" ? "none" : "fixed_api_key",
      target: targetOf(row),
      createdAt: row.created_at,
      keys: new Map(keys.map((k) => [k.key_hash, { id: k.id, hash: k.key_hash }])),
      keyPrefixes: new Set(keys.map((k) => k.prefix)),
    };
  }
}
