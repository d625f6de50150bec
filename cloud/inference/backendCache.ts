/**
 * Which backend serves a target, kept per target, so answering a request reads no rows: resolving
 * reads up to three (the job, its artifact, the base model; cloud/inference/targets.ts), on every
 * Playground / SDK `infer` request and on every background reload of an edge deployment's state.
 *
 * Kept like the edge's deployment state (cloud/edge/deploymentCache.ts): dropped when a base model
 * changes (the `null` deployment-change notification, from this process or, on PostgreSQL, another
 * instance) and otherwise trusted for at most `ttlMs`, the bound on how late a job's newer adapter
 * is picked up. A target that cannot be served (no adapter yet, unknown model) is never kept: the
 * next request resolves it again and says why. Lookups of a target being resolved share that work.
 */
import type { DeploymentTarget } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import type { Backend } from "./types.js";

/** More targets than any cloud serves at once; beyond it the oldest entry goes. */
const MAX_TARGETS = 10_000;

interface Entry {
  backend: Promise<Backend>;
  expiresAt: number;
}

export class BackendCache {
  private readonly entries = new Map<string, Entry>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly resolve: (target: DeploymentTarget) => Promise<Backend>,
    changes: Pick<CloudContext["deploymentChanges"], "subscribe">,
    private readonly ttlMs: number,
    /** The clock TTLs are counted on (tests move it instead of waiting). */
    private readonly now: () => number = Date.now,
  ) {
    // A deployment's own change (keys, auth, target) leaves target → backend as it was; a base model's does not.
    this.unsubscribe = changes.subscribe((slug) => slug === null && this.entries.clear());
  }

  get(target: DeploymentTarget): Promise<Backend> {
    const key = targetKey(target);
    const now = this.now();
    const kept = this.entries.get(key);
    if (kept && kept.expiresAt > now) return kept.backend;
    const entry: Entry = { backend: this.resolve(target), expiresAt: now + this.ttlMs };
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (this.entries.size > MAX_TARGETS) this.entries.delete(this.entries.keys().next().value!);
    entry.backend.catch(() => this.entries.get(key) === entry && this.entries.delete(key));
    return entry.backend;
  }

  /** Targets held now (for tests). */
  get size(): number {
    return this.entries.size;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
  }
}

function targetKey(target: DeploymentTarget): string {
  if (target.kind === "base_model") return `base_model\0${target.name}`;
  const on = target.baseModel === undefined ? "" : `\0on\0${target.baseModel}`;
  return (target.kind === "adapter" ? `adapter\0${target.jobId}` : `checkpoint\0${target.jobId}\0${target.step}`) + on;
}
