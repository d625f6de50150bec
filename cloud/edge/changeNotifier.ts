/**
 * Tells edge caches that a deployment (or its keys) changed, so a revoked key, a disabled
 * deployment or a new auth mode applies at once on this process; or that every deployment may
 * now be served differently (a base model was registered or replaced). Other cloud instances
 * (several processes on one PostgreSQL) do not hear it; the edge cache's short TTL bounds them instead.
 */
/** `slug` null: every deployment. */
export type DeploymentChangeListener = (slug: string | null) => void;

export class DeploymentChangeNotifier {
  private readonly listeners = new Set<DeploymentChangeListener>();

  /** Call after every committed mutation of a deployment or its keys, with its slug. */
  changed(slug: string): void {
    for (const listener of this.listeners) listener(slug);
  }

  /** Call after a committed change that can affect any deployment (base models). */
  changedAll(): void {
    for (const listener of this.listeners) listener(null);
  }

  subscribe(listener: DeploymentChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
