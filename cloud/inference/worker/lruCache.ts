/**
 * A weighted LRU of loaded things (models weigh their file size, contexts weigh 1). Entries in
 * use are pinned and never evicted, so the bound can be exceeded briefly rather than pulling
 * weights out from under a running generation.
 */
interface Entry<V> {
  value: Promise<V>;
  weight: number;
  pins: number;
}

export class LruCache<V> {
  private readonly entries = new Map<string, Entry<V>>();

  constructor(
    private readonly maxWeight: number,
    private readonly dispose: (key: string, value: V) => Promise<void>,
  ) {}

  /** Returns the cached value (loading it once) pinned; call the returned release when done. */
  async acquire(key: string, weight: number, load: () => Promise<V>): Promise<{ value: V; release: () => void }> {
    let entry = this.entries.get(key);
    if (entry) {
      // Re-insert to mark as most recently used (Map keeps insertion order).
      this.entries.delete(key);
      this.entries.set(key, entry);
    } else {
      entry = { value: load(), weight, pins: 0 };
      this.entries.set(key, entry);
      entry.value.catch(() => this.entries.get(key) === entry && this.entries.delete(key));
    }
    entry.pins += 1;
    const pinned = entry;
    let value: V;
    try {
      value = await entry.value;
    } catch (err) {
      pinned.pins -= 1;
      throw err;
    }
    await this.evictOverflow();
    let released = false;
    return {
      value,
      release: () => {
        if (released) return;
        released = true;
        pinned.pins -= 1;
        void this.evictOverflow();
      },
    };
  }

  /** Drops every entry whose key passes the test (e.g. the contexts of an evicted model). */
  async evictWhere(test: (key: string) => boolean): Promise<void> {
    for (const [key, entry] of [...this.entries]) {
      if (test(key) && entry.pins === 0) await this.remove(key, entry);
    }
  }

  /** Whether the key is loaded (or loading). */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Whether the key is loaded (or loading) and nobody holds it. */
  isIdle(key: string): boolean {
    return this.entries.get(key)?.pins === 0;
  }

  get size(): number {
    return this.entries.size;
  }

  async clear(): Promise<void> {
    for (const [key, entry] of [...this.entries]) await this.remove(key, entry);
  }

  private totalWeight(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.weight;
    return total;
  }

  private async evictOverflow(): Promise<void> {
    for (const [key, entry] of [...this.entries]) {
      if (this.totalWeight() <= this.maxWeight) return;
      if (entry.pins === 0) await this.remove(key, entry);
    }
  }

  private async remove(key: string, entry: Entry<V>): Promise<void> {
    if (this.entries.get(key) !== entry) return;
    this.entries.delete(key);
    const value = await entry.value.catch(() => null);
    if (value !== null) await this.dispose(key, value).catch(() => undefined);
  }
}
