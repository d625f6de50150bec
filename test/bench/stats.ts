/** Tiny helpers for benchmarks: percentiles and a uniform report line. */

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

export function report(name: string, value: number, unit: string, baselineName: string, baseline: number, higherIsBetter = true): void {
  const ratio = higherIsBetter ? value / baseline : baseline / value;
  console.log(
    `${name.padEnd(44)} ${fmt(value).padStart(10)} ${unit.padEnd(8)} | baseline ${baselineName}: ${fmt(baseline)} ${unit} | ratio ${ratio.toFixed(3)}`,
  );
}

const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n.toFixed(4));

/** Measures latencies (ms) of `count` sequential calls after `warmup` unmeasured ones. */
export async function latencies(fn: () => Promise<unknown>, count: number, warmup = 50): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out.sort((a, b) => a - b);
}
