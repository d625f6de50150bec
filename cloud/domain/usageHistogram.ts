/**
 * Latency histograms of usage rows: log-scale buckets of milliseconds, 8 per doubling, so counts add up across
 * flushes, cloud instances, keys and time buckets, and a percentile read from the sum is within 5% of the exact one
 * (a bucket spans 9%; its middle is reported).
 */
const PER_DOUBLING = 8;

/** The bucket of a duration: 0 for 0 ms, 80 for ~1 s, 127 for ~1 min. */
export function latencyBucket(ms: number): number {
  return Math.max(0, Math.floor(Math.log2(1 + Math.max(0, ms)) * PER_DOUBLING));
}

/** The middle of a bucket, in milliseconds (geometric, on the same 1 + ms scale). */
export function bucketMiddleMs(bucket: number): number {
  return 2 ** ((bucket + 0.5) / PER_DOUBLING) - 1;
}

/** The duration below which `p` percent of the counted ones fall, to 0.1 ms; null when nothing was counted. */
export function histogramPercentile(counts: ReadonlyMap<number, number>, p: number): number | null {
  let total = 0;
  for (const count of counts.values()) total += count;
  if (total === 0) return null;
  const rank = Math.ceil((p / 100) * total);
  let seen = 0;
  for (const bucket of [...counts.keys()].sort((a, b) => a - b)) {
    seen += counts.get(bucket)!;
    if (seen >= rank) return Math.round(bucketMiddleMs(bucket) * 10) / 10;
  }
  return null;
}
