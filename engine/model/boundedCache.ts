/**
 * A small least-recently-used map with a fixed number of entries. A long-lived worker trains job
 * after job with batches of many lengths; a cache keyed by length would otherwise keep every table
 * it ever built. `evicted` frees what an entry holds outside the JavaScript heap (a kept tensor).
 */
export class BoundedCache<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(
    readonly capacity: number,
    private readonly evicted: (value: V) => void = () => undefined,
  ) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`cache capacity must be a positive integer, got ${capacity}`);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    // Map keeps insertion order: re-inserting moves the key to the most recent end.
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  /** Stores the value as the most recently used, evicting the least recently used beyond the capacity. */
  set(key: K, value: V): void {
    const previous = this.entries.get(key);
    this.entries.delete(key);
    this.entries.set(key, value);
    if (previous !== undefined && previous !== value) this.evicted(previous);
    while (this.entries.size > this.capacity) {
      const [oldestKey, oldest] = this.entries.entries().next().value as [K, V];
      this.entries.delete(oldestKey);
      this.evicted(oldest);
    }
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }
}
