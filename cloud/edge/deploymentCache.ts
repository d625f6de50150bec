/**
 * What the edge needs to know about a deployment on every request (enabled, auth mode, key
 * hashes, target and the backend serving it), cached per slug, so a request touches no database.
 * An entry is dropped when the control plane reports a change (same process: immediate; a base
 * model change drops them all) and otherwise lives at most `ttlMs` (other processes: the bound on
 * how late a revoked key or a disabled deployment can still be honoured). Lookups of the same
 * slug while a load is running share that load.
 *
 * A slug in use is reloaded in the background once half its TTL has passed, and the fresh state
 * replaces the old one only when it is loaded, so requests under steady traffic never wait for
 * the database; the TTL is still counted from the start of the load that read the state.
 *
 * The map is bounded (least recently used out first) and only slugs that could exist are looked up
 * or kept: a client sending random Host names costs one regular-expression test per request, and
 * random well-formed slugs cost at most `maxEntries` small entries, never unbounded memory.
 */
import type { DeploymentTarget } from "../../sdk/wire.js";
import { SLUG_PATTERN } from "../../sdk/api/deployments.js";
import type { CloudContext } from "../context.js";
import { corsOriginsOf, targetOf } from "../domain/deployments.js";
import type { Backend } from "../inference/index.js";
import { budgetOf } from "../domain/deploymentKeys.js";
import type { KeyRulesState } from "./keyMeter.js";

export interface DeploymentState {
  id: string;
  slug: string;
  projectId: string;
  authMode: "fixed_api_key" | "none";
  target: DeploymentTarget;
  createdAt: string;
  /** SHA-256 hex of each enabled key → that key and its rules. */
  keys: Map<string, CachedKey>;
  /** Display prefixes of the enabled keys (the failed-auth limiter keys its buckets by them). */
  keyPrefixes: Set<string>;
  /** Browser origins allowed by this deployment (CORS); null: the edge's default. */
  corsOrigins: string[] | null;
  /**
   * The backend serving the target, when it could be resolved with this state. Unset when it
   * could not (a job's adapter not written yet): the request resolves it again, and reports why not.
   */
  backend?: Backend;
}

export type CachedKey = KeyRulesState & { hash: string };

const POSSIBLE_SLUG = new RegExp(SLUG_PATTERN);
const NO_DEPLOYMENT: Promise<DeploymentState | null> = Promise.resolve(null);
export const DEFAULT_MAX_CACHED_SLUGS = 10_000;

export type BackendResolver = (target: DeploymentTarget) => Promise<Backend>;

interface Entry {
  /** null: no servable deployment (unknown, disabled or deleted). */
  state: Promise<DeploymentState | null>;
  expiresAt: number;
  refreshAt: number;
  refreshing: boolean;
}

export class DeploymentCache {
  private readonly entries = new Map<string, Entry>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctx: CloudContext,
    private readonly ttlMs: number,
    private readonly resolveBackend: BackendResolver,
    /** The clock TTLs are counted on (tests move it instead of waiting). */
    private readonly now: () => number = Date.now,
    /** Most slugs kept at once; the least recently used goes first. */
    private readonly maxEntries = DEFAULT_MAX_CACHED_SLUGS,
  ) {
    this.unsubscribe = ctx.deploymentChanges.subscribe((slug) => (slug === null ? this.entries.clear() : this.entries.delete(slug)));
  }

  get(slug: string): Promise<DeploymentState | null> {
    const now = this.now();
    const cached = this.entries.get(slug);
    if (cached && cached.expiresAt > now) {
      if (now >= cached.refreshAt && !cached.refreshing) this.refresh(slug, cached, now);
      this.touch(slug, cached);
      return cached.state;
    }
    // No deployment can have this slug (the control plane refuses it): no query, nothing kept.
    if (!POSSIBLE_SLUG.test(slug)) return NO_DEPLOYMENT;
    const entry = this.entry(slug, now);
    this.entries.delete(slug);
    this.entries.set(slug, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    // A failed load (database hiccup) must not be cached.
    entry.state.catch(() => this.entries.get(slug) === entry && this.entries.delete(slug));
    return entry.state;
  }

  /** Slugs held now (for tests and metrics). */
  get size(): number {
    return this.entries.size;
  }

  /** Marks `slug` most recently used: Map keeps insertion order, so the first key is the eviction candidate. */
  private touch(slug: string, entry: Entry): void {
    this.entries.delete(slug);
    this.entries.set(slug, entry);
  }

  /** The backend of a state: cached with it, else resolved now (throws the 503 that says why not). */
  async backend(state: DeploymentState): Promise<Backend> {
    if (state.backend) return state.backend;
    state.backend = await this.resolveBackend(state.target);
    return state.backend;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
  }

  private entry(slug: string, now: number): Entry {
    return { state: this.load(slug), expiresAt: now + this.ttlMs, refreshAt: now + this.ttlMs / 2, refreshing: false };
  }

  /** Loads the slug again and swaps the result in, unless a change notification dropped `current` meanwhile. */
  private refresh(slug: string, current: Entry, now: number): void {
    current.refreshing = true;
    const next = this.entry(slug, now);
    // A failed refresh leaves `current` to expire; the next request then loads as usual.
    next.state.then(() => this.entries.get(slug) === current && this.entries.set(slug, next)).catch(() => undefined);
  }

  private async load(slug: string): Promise<DeploymentState | null> {
    const row = await this.ctx.db.selectFrom("deployments").selectAll().where("slug", "=", slug).executeTakeFirst();
    if (!row || row.deleted_at !== null || !Number(row.enabled)) return null;
    const keys = await this.ctx.db
      .selectFrom("deployment_keys")
      .select(["id", "key_hash", "prefix", "expires_at", "requests_per_minute", "tokens_per_minute", "budget_tokens", "budget_period"])
      .where("deployment_id", "=", row.id)
      .where("enabled", "=", 1)
      .execute();
    const target = targetOf(row);
    return {
      id: row.id,
      slug: row.slug,
      projectId: row.project_id,
      authMode: row.auth_mode === "none" ? "none" : "fixed_api_key",
      target,
      createdAt: row.created_at,
      keys: new Map(
        keys.map((k) => [
          k.key_hash,
          {
            id: k.id,
            hash: k.key_hash,
            prefix: k.prefix,
            expiresAtMs: k.expires_at === null ? null : Date.parse(k.expires_at),
            requestsPerMinute: k.requests_per_minute === null ? null : Number(k.requests_per_minute),
            tokensPerMinute: k.tokens_per_minute === null ? null : Number(k.tokens_per_minute),
            budget: budgetOf(k),
          },
        ]),
      ),
      keyPrefixes: new Set(keys.map((k) => k.prefix)),
      corsOrigins: corsOriginsOf(row),
      // Not resolvable now is not a failed load: the request resolves it again and answers why.
      backend: await this.resolveBackend(target).catch(() => undefined),
    };
  }
}
