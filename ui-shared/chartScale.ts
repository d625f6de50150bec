/**
 * The y scale of the job charts: linear (SPEC section 6's min-max scaling) or logarithmic (a
 * toggle beyond the spec, for losses that fall by orders of magnitude). The plot works in "scale
 * space" (the value itself, or its log10), so the geometry of chart.ts stays linear.
 */
import { niceTicks, type Extent } from "./chart.js";

export type ValueScale = "linear" | "log";

/** Where a value sits in scale space; NaN where the scale cannot place it (zero or negative on a log scale). */
export function toScale(value: number, scale: ValueScale): number {
  if (scale === "linear") return value;
  return value > 0 ? Math.log10(value) : NaN;
}

/**
 * Tick values (in data space, ready to label) for an extent given in scale space. Linear: nice
 * 1-2-5 steps. Log: within one decade, nice steps of the values themselves (1.8 to 3.5 reads
 * 2, 2.5, 3, 3.5); across decades, 1, 2 and 5 times each power of ten, thinned to powers of ten
 * when that would crowd the axis.
 */
export function scaleTicks(extent: Extent, scale: ValueScale, count = 5): number[] {
  if (scale === "linear") return niceTicks(extent, count);
  const low = 10 ** extent.min;
  const high = 10 ** extent.max;
  if (extent.max - extent.min < 1) {
    // Nice steps suit a linear axis; on a log one they can leave most of the height unlabelled
    // (0.2 to 1.3 gets only 0.5 and 1), so ask for finer ones then.
    const ticks = niceTicks({ min: low, max: high }, count).filter((t) => t > 0);
    return ticks.length >= 3 ? ticks : niceTicks({ min: low, max: high }, count * 2).filter((t) => t > 0);
  }
  const ticks: number[] = [];
  const multiples = extent.max - extent.min <= 3 ? [1, 2, 5] : [1];
  for (let power = Math.floor(extent.min); power <= Math.ceil(extent.max); power++) {
    for (const m of multiples) {
      const value = Number((m * 10 ** power).toPrecision(12));
      const at = Math.log10(value);
      if (at >= extent.min - 1e-9 && at <= extent.max + 1e-9) ticks.push(value);
    }
  }
  // More decades than room: every second or third power of ten.
  if (multiples.length === 1 && ticks.length > count + 2) {
    const stride = Math.ceil(ticks.length / count);
    return ticks.filter((_, i) => i % stride === 0);
  }
  return ticks;
}

/** Short tick label: 3 significant digits, and powers of ten past 1e4 or under 1e-3 in exponent form. */
export function tickLabel(value: number): string {
  const abs = Math.abs(value);
  if (abs !== 0 && (abs >= 1e5 || abs < 1e-3)) return value.toExponential(0).replace("e+", "e");
  if (abs >= 100) return value.toFixed(0);
  return Number(value.toPrecision(3)).toString();
}
