/**
 * Per-series summary statistics for the job detail "Advanced" cards (SPEC section 6, rule 4).
 * Pure maths, no DOM: unit-tested against numpy/scipy reference values.
 */

/** Summary of one loss series. Fields that need more data than is available are `undefined`, never NaN. */
export interface SeriesStats {
  /** Number of samples the summary is based on. */
  n: number;
  mean: number | undefined;
  /** Half-width of the 95% confidence interval of the mean (Student's t for n <= 31, z = 1.96 above). */
  ciHalfWidth: number | undefined;
  /** Sample standard deviation (ddof = 1). */
  std: number | undefined;
  /** Sample variance (ddof = 1). */
  variance: number | undefined;
  /** 90th percentile, linear interpolation (numpy's default). */
  p90: number | undefined;
  /** 95th percentile, linear interpolation (numpy's default). */
  p95: number | undefined;
}

/** Above this many samples the spec switches from Student's t to the normal z = 1.96. */
export const T_TO_Z_SWITCH_N = 31;
const Z_95 = 1.96;

export function computeStats(values: readonly number[]): SeriesStats {
  const n = values.length;
  if (n === 0) {
    return { n, mean: undefined, ciHalfWidth: undefined, std: undefined, variance: undefined, p90: undefined, p95: undefined };
  }
  const mean = sum(values) / n;
  const sorted = [...values].sort((a, b) => a - b);
  const p90 = percentileSorted(sorted, 90);
  const p95 = percentileSorted(sorted, 95);
  if (n === 1) {
    // One sample has a mean and percentiles but no spread: ddof = 1 divides by zero.
    return { n, mean, ciHalfWidth: undefined, std: undefined, variance: undefined, p90, p95 };
  }
  let squares = 0;
  for (const v of values) squares += (v - mean) * (v - mean);
  const variance = squares / (n - 1);
  const std = Math.sqrt(variance);
  const critical = n > T_TO_Z_SWITCH_N ? Z_95 : studentTQuantile(0.975, n - 1);
  return { n, mean, ciHalfWidth: (critical * std) / Math.sqrt(n), std, variance, p90, p95 };
}

/** numpy.percentile(values, q) with the default method="linear", for an ascending array. */
export function percentileSorted(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  const position = ((sorted.length - 1) * q) / 100;
  const lower = Math.floor(position);
  const upper = Math.min(lower + 1, sorted.length - 1);
  const fraction = position - lower;
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

export function percentile(values: readonly number[], q: number): number | undefined {
  return percentileSorted(
    [...values].sort((a, b) => a - b),
    q,
  );
}

function sum(values: readonly number[]): number {
  // Kahan summation keeps long loss series (100k points) accurate to the last printed digit.
  let total = 0;
  let compensation = 0;
  for (const v of values) {
    const y = v - compensation;
    const t = total + y;
    compensation = t - total - y;
    total = t;
  }
  return total;
}

/**
 * Quantile of Student's t distribution: the t with P(T <= t) = p for `df` degrees of freedom.
 * Solved by bisection on the CDF, which is exact to double precision in ~100 steps and needs no table.
 */
export function studentTQuantile(p: number, df: number): number {
  if (!(p > 0 && p < 1) || !(df > 0)) throw new RangeError(`studentTQuantile: bad arguments p=${p} df=${df}`);
  if (p === 0.5) return 0;
  if (p < 0.5) return -studentTQuantile(1 - p, df);
  let low = 0;
  let high = 1;
  while (studentTCdf(high, df) < p) high *= 2;
  for (let i = 0; i < 200 && high - low > 1e-15 * high; i++) {
    const mid = (low + high) / 2;
    if (studentTCdf(mid, df) < p) low = mid;
    else high = mid;
  }
  return (low + high) / 2;
}

/** CDF of Student's t via the regularized incomplete beta function. */
export function studentTCdf(t: number, df: number): number {
  const x = df / (df + t * t);
  const tail = 0.5 * regularizedIncompleteBeta(x, df / 2, 0.5);
  return t >= 0 ? 1 - tail : tail;
}

/** I_x(a, b), evaluated with the continued fraction of Numerical Recipes (modified Lentz). */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const logFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x);
  const front = Math.exp(logFront);
  // The continued fraction converges fast only on one side of the mean; use the symmetry otherwise.
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(x, a, b)) / a;
  return 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let result = d;
  for (let m = 1; m <= 500; m++) {
    const m2 = 2 * m;
    let numerator = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + numerator * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + numerator / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    result *= d * c;
    numerator = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + numerator * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + numerator / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    result *= delta;
    if (Math.abs(delta - 1) < 1e-16) break;
  }
  return result;
}

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
  9.9843695780195716e-6, 1.5056327351493116e-7,
];

/** ln Γ(z) for z > 0 (Lanczos approximation, g = 7, ~15 significant digits). */
export function logGamma(z: number): number {
  if (z < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * z)) - logGamma(1 - z);
  const zm = z - 1;
  let series = LANCZOS[0];
  for (let i = 1; i < LANCZOS.length; i++) series += LANCZOS[i] / (zm + i);
  const t = zm + 7.5;
  return 0.5 * Math.log(2 * Math.PI) + (zm + 0.5) * Math.log(t) - t + Math.log(series);
}

/** Renders a statistic for the cards: four decimals, or an em dash when it does not exist yet. */
export function formatStat(value: number | undefined, digits = 4): string {
  return value === undefined || !Number.isFinite(value) ? "—" : value.toFixed(digits);
}
