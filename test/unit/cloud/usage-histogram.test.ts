/** Latency histograms of usage rows (issue 28): percentiles read from summed buckets stay within 5% of the exact ones. */
import assert from "node:assert/strict";
import { histogramPercentile, latencyBucket } from "../../../cloud/domain/usageHistogram.js";

function exactPercentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil((p / 100) * sorted.length) - 1];
}

describe("usage latency histograms", () => {
  it("reads p50 and p95 within 5% of the exact values, over durations from 1 ms to a minute", () => {
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (const spread of [10, 1000, 60_000]) {
      const values = Array.from({ length: 5000 }, () => 1 + random() * spread);
      const counts = new Map<number, number>();
      for (const v of values) counts.set(latencyBucket(v), (counts.get(latencyBucket(v)) ?? 0) + 1);
      for (const p of [50, 95]) {
        const exact = exactPercentile(values, p);
        const read = histogramPercentile(counts, p)!;
        assert.ok(Math.abs(read - exact) / exact <= 0.05, `p${p} of 1..${spread} ms: read ${read}, exact ${exact}`);
      }
    }
  });

  it("adds up: two histograms summed read as one of all their durations", () => {
    const a = new Map([[latencyBucket(10), 3]]);
    const b = new Map([[latencyBucket(1000), 1]]);
    const sum = new Map(a);
    for (const [k, v] of b) sum.set(k, (sum.get(k) ?? 0) + v);
    assert.ok(Math.abs(histogramPercentile(sum, 50)! - 10) <= 0.5);
    assert.ok(Math.abs(histogramPercentile(sum, 95)! - 1000) <= 50);
    assert.equal(histogramPercentile(new Map(), 50), null);
  });
});
