/**
 * Tells edge caches that a deployment (or its keys) changed, so a revoked key, a disabled
 * deployment or a new auth mode applies at once; or that every deployment may now be served
 * differently (a base model was registered or replaced). On PostgreSQL the change is signalled to
 * every other instance too (cloud/store/clusterSignals.ts), whose caches drop it as well; after
 * their listener reconnects they drop everything, since changes may have been missed.
 */
import type { ClusterSignals } from "../store/clusterSignals.js";

/** `slug` null: every deployment. */
export type DeploymentChangeListener = (slug: string | null) => void;

export class DeploymentChangeNotifier {
  private readonly listeners = new Set<DeploymentChangeListener>();

  constructor(private readonly cluster?: ClusterSignals) {
    cluster?.on("deployment", (message) => this.tellLocal(typeof message.slug === "string" ? message.slug : null));
    cluster?.onResync(() => this.tellLocal(null));
  }

  /** Call after every committed mutation of a deployment or its keys, with its slug. */
  changed(slug: string): void {
    this.tellLocal(slug);
    void this.cluster?.signal("deployment", { slug });
  }

  /** Call after a committed change that can affect any deployment (base models). */
  changedAll(): void {
    this.tellLocal(null);
    void this.cluster?.signal("deployment", { slug: null });
  }

  subscribe(listener: DeploymentChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private tellLocal(slug: string | null): void {
    for (const listener of this.listeners) listener(slug);
  }
}
