/**
 * Tells edge caches that a deployment (or its keys) changed, so a revoked key, a disabled
 * deployment or a new auth mode applies at once on this process. Other cloud instances (several
 * processes on one PostgreSQL) do not hear it; the edge cache's short TTL bounds them instead.
 */
export type DeploymentChangeListener = (slug: string) => void;

export class DeploymentChangeNotifier {
  private readonly listeners = new Set<DeploymentChangeListener>();

  /** Call after every committed mutation of a deployment or its keys, with its slug. */
  changed(slug: string): void {
    for (const listener of this.listeners) listener(slug);
  }

  subscribe(listener: DeploymentChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
