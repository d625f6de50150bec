/**
 * Slows down key guessing: each bucket (the caller names it: client address plus presented key,
 * see deploymentAuth.ts) holds failed-auth "tokens" that refill slowly; when it is empty the edge
 * answers 429 before checking the key. The map is bounded: a flood of new bucket names (random
 * addresses or keys) evicts the least recently failed buckets instead of growing without end.
 */
export interface AuthFailureLimits {
  /** Failed attempts allowed in a burst. */
  burst: number;
  /** Attempts regained per second. */
  refillPerSecond: number;
  /** Most buckets kept (default 100,000, a few MB); the least recently failed go first. */
  maxBuckets?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class AuthFailureLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly limits: AuthFailureLimits) {
    // Full buckets carry no information: drop them so the map stays small.
    this.sweeper = setInterval(() => {
      for (const [name, bucket] of this.buckets) if (this.current(bucket) >= this.limits.burst) this.buckets.delete(name);
    }, 60_000);
    this.sweeper.unref();
  }

  /** Seconds until the bucket may try again, or 0 when it may try now. */
  retryAfter(name: string): number {
    const bucket = this.buckets.get(name);
    if (!bucket || this.current(bucket) >= 1) return 0;
    return Math.max(1, Math.ceil((1 - this.current(bucket)) / this.limits.refillPerSecond));
  }

  recordFailure(name: string): void {
    const bucket = this.buckets.get(name) ?? { tokens: this.limits.burst, updatedAt: Date.now() };
    bucket.tokens = this.current(bucket) - 1;
    bucket.updatedAt = Date.now();
    // Delete and set again: a Map iterates in insertion order, so the first entry is the least recently failed.
    this.buckets.delete(name);
    this.buckets.set(name, bucket);
    const max = this.limits.maxBuckets ?? 100_000;
    while (this.buckets.size > max) this.buckets.delete(this.buckets.keys().next().value!);
  }

  /** Buckets held now (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  close(): void {
    clearInterval(this.sweeper);
  }

  private current(bucket: Bucket): number {
    return Math.min(this.limits.burst, bucket.tokens + ((Date.now() - bucket.updatedAt) / 1000) * this.limits.refillPerSecond);
  }
}
