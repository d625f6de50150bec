/**
 * Geometry of the job detail loss chart (SPEC section 6, rule 3): min-max y scaling, x = step,
 * per-pixel-column decimation and nearest-step lookup. Pure functions so they are unit-tested
 * and stay fast on 100,000-point series.
 */

export interface ChartPoint {
  step: number;
  value: number;
}

export interface Extent {
  min: number;
  max: number;
}

export interface PlotArea {
  /** Left edge of the plotting area in SVG user units. */
  left: number;
  top: number;
  width: number;
  height: number;
}

/** Min and max of the values of all series; undefined when there is no point at all. */
export function valueExtent(...series: readonly (readonly ChartPoint[])[]): Extent | undefined {
  let min = Infinity;
  let max = -Infinity;
  for (const points of series) {
    const range = valueRange(points, 0, points.length);
    if (range.min < min) min = range.min;
    if (range.max > max) max = range.max;
  }
  if (min === Infinity) return undefined;
  return padFlat({ min, max });
}

/**
 * Unpadded min and max of `points[from..to)` (Infinity / -Infinity when empty). A plain indexed
 * loop: it runs on 100,000 points while the job page opens, often before the JIT has warmed up.
 */
export function valueRange(points: readonly ChartPoint[], from: number, to: number): Extent {
  let min = Infinity;
  let max = -Infinity;
  for (let i = from; i < to; i++) {
    const v = points[i].value;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { min, max };
}

/** Step range of all series (x axis). */
export function stepExtent(...series: readonly (readonly ChartPoint[])[]): Extent | undefined {
  let min = Infinity;
  let max = -Infinity;
  for (const points of series) {
    if (points.length === 0) continue;
    // Series are ascending by step, so the ends are enough.
    min = Math.min(min, points[0].step);
    max = Math.max(max, points[points.length - 1].step);
  }
  if (min === Infinity) return undefined;
  return padFlat({ min, max });
}

/** A flat extent (one point, or a constant loss) would divide by zero; widen it symmetrically. */
export function padFlat(extent: Extent): Extent {
  if (extent.max > extent.min) return extent;
  const half = Math.abs(extent.min) * 0.05 || 0.5;
  return { min: extent.min - half, max: extent.max + half };
}

/** Maps a value in `extent` linearly onto [0, 1]. */
export function normalise(value: number, extent: Extent): number {
  return (value - extent.min) / (extent.max - extent.min);
}

export function xForStep(step: number, steps: Extent, area: PlotArea): number {
  return area.left + normalise(step, steps) * area.width;
}

/** SVG y grows downwards, so the max value sits at the top of the area. */
export function yForValue(value: number, values: Extent, area: PlotArea): number {
  return area.top + (1 - normalise(value, values)) * area.height;
}

export function stepForX(x: number, steps: Extent, area: PlotArea): number {
  return steps.min + ((x - area.left) / area.width) * (steps.max - steps.min);
}

/**
 * Keeps, for every pixel column, the first, min, max and last point of that column (in step order,
 * deduplicated). A polyline through these is pixel-identical to one through all points, while the
 * vertex count is bounded by 4 x width. `from`/`to` limit it to a slice (a zoomed chart) without
 * copying the series. The column arithmetic is inlined: this loop is the chart's hot path.
 */
export function decimate(points: readonly ChartPoint[], steps: Extent, area: PlotArea, from = 0, to = points.length): ChartPoint[] {
  if (to - from <= area.width * 4) return points.slice(from, to);
  const out: ChartPoint[] = [];
  const scale = area.width / (steps.max - steps.min);
  const offset = area.left - steps.min * scale;
  let column = Math.floor(points[from].step * scale + offset);
  let first = from;
  let minIndex = from;
  let maxIndex = from;
  let minValue = points[from].value;
  let maxValue = minValue;
  for (let i = from + 1; i <= to; i++) {
    const c = i < to ? Math.floor(points[i].step * scale + offset) : NaN;
    if (c === column) {
      const v = points[i].value;
      if (v < minValue) {
        minValue = v;
        minIndex = i;
      }
      if (v > maxValue) {
        maxValue = v;
        maxIndex = i;
      }
      continue;
    }
    // The column ended at i - 1: emit first, min, max, last in index order, each once.
    const last = i - 1;
    const low = minIndex < maxIndex ? minIndex : maxIndex;
    const high = minIndex < maxIndex ? maxIndex : minIndex;
    out.push(points[first]);
    if (low !== first) out.push(points[low]);
    if (high !== low) out.push(points[high]);
    if (last !== high) out.push(points[last]);
    if (i === to) break;
    column = c;
    first = minIndex = maxIndex = i;
    minValue = maxValue = points[i].value;
  }
  return out;
}

/** `M x y L x y ...` through the points, rounded to 0.1 unit to keep the attribute short. */
export function linePath(points: readonly ChartPoint[], steps: Extent, values: Extent, area: PlotArea): string {
  const parts: string[] = [];
  for (let i = 0; i < points.length; i++) {
    const x = round1(xForStep(points[i].step, steps, area));
    const y = round1(yForValue(points[i].value, values, area));
    parts.push(`${i === 0 ? "M" : "L"}${x} ${y}`);
  }
  return parts.join(" ");
}

function round1(n: number): number {
  return Math.round(n * 10) / 10;
}

/**
 * Index of the element of the ascending `sorted` closest to `target` (ties go to the lower one),
 * looking only at `[from, to)`; -1 when that is empty.
 */
export function nearestIndex(sorted: readonly number[], target: number, from = 0, to = sorted.length): number {
  if (to <= from) return -1;
  // The first element >= target in [from, to - 1] (the last one when none is); its left neighbour may be closer.
  const low = from + firstIndex(to - 1 - from, (i) => sorted[from + i] >= target);
  if (low > from && target - sorted[low - 1] <= sorted[low] - target) return low - 1;
  return low;
}

/**
 * Appends a point keeping the series ascending by step. Events arrive in step order, so this is
 * O(1) in practice; a late point is inserted in place rather than drawing a line backwards.
 */
export function insertByStep(points: ChartPoint[], point: ChartPoint): void {
  const last = points[points.length - 1];
  if (last === undefined || last.step < point.step) {
    points.push(point);
    return;
  }
  if (last.step === point.step) {
    points[points.length - 1] = point; // A replayed frame for the same step replaces, never duplicates.
    return;
  }
  const low = lowerBoundByStep(points, point.step); // O(log n), no copy of the series
  if (points[low].step === point.step) points[low] = point;
  else points.splice(low, 0, point);
}

/** The first index in `[0, count)` for which `isPast` holds (count when none), given it holds from some index on. */
function firstIndex(count: number, isPast: (index: number) => boolean): number {
  let low = 0;
  let high = count;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (isPast(mid)) high = mid;
    else low = mid + 1;
  }
  return low;
}

/** Index of the first point whose step is >= `step` (points.length when none). */
export function lowerBoundByStep(points: readonly ChartPoint[], step: number): number {
  return firstIndex(points.length, (i) => points[i].step >= step);
}

/** First index of the ascending `sorted` whose element is >= `value`. */
export function lowerBound(sorted: readonly number[], value: number): number {
  return firstIndex(sorted.length, (i) => sorted[i] >= value);
}

/** First index of the ascending `sorted` whose element is > `value`. */
export function upperBound(sorted: readonly number[], value: number): number {
  return firstIndex(sorted.length, (i) => sorted[i] > value);
}

/** The value at exactly `step`, or undefined (binary search; series hold one point per step). */
export function valueAtStep(points: readonly ChartPoint[], step: number): number | undefined {
  const index = lowerBoundByStep(points, step);
  return index < points.length && points[index].step === step ? points[index].value : undefined;
}

/** Which points of a series a step window shows. */
export interface WindowIndices {
  /** `[first, end)`: the points with `window.min <= step <= window.max`. */
  first: number;
  end: number;
  /**
   * `[from, to)`: the same widened by one point on each side, so a zoomed line runs on to the
   * plot's edges (the plot clips it) instead of stopping short of them.
   */
  from: number;
  to: number;
}

export function windowIndices(points: readonly ChartPoint[], window: Extent): WindowIndices {
  const first = lowerBoundByStep(points, window.min);
  let end = lowerBoundByStep(points, window.max);
  while (end < points.length && points[end].step <= window.max) end++;
  return { first, end, from: Math.max(0, first - 1), to: Math.min(points.length, end + 1) };
}

export interface HoverReadout<K extends string = string> {
  step: number;
  /** The value of each series at exactly that step, where it has one. */
  values: Partial<Record<K, number>>;
}

/**
 * Hover: the step nearest to `targetStep` in `stepIndex` (ascending steps of the series the cursor
 * follows), and the value every series has at exactly that step.
 */
export function hoverReadout<K extends string>(
  targetStep: number,
  stepIndex: readonly number[],
  series: Readonly<Record<K, readonly ChartPoint[]>>,
  window?: Extent,
): HoverReadout<K> | undefined {
  const index = window
    ? nearestIndex(stepIndex, targetStep, lowerBound(stepIndex, window.min), upperBound(stepIndex, window.max))
    : nearestIndex(stepIndex, targetStep);
  if (index < 0) return undefined;
  const step = stepIndex[index];
  const values: Partial<Record<K, number>> = {};
  for (const key of Object.keys(series) as K[]) {
    const value = valueAtStep(series[key], step);
    if (value !== undefined) values[key] = value;
  }
  return { step, values };
}

/** Up to `count` evenly spaced "nice" tick values covering the extent (1, 2, 5 x 10^k spacing). */
export function niceTicks(extent: Extent, count: number): number[] {
  const span = extent.max - extent.min;
  if (!(span > 0) || count < 1) return [];
  const rough = span / count;
  const magnitude = 10 ** Math.floor(Math.log10(rough));
  const spacing = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= rough) ?? 10 * magnitude;
  const ticks: number[] = [];
  for (let t = Math.ceil(extent.min / spacing) * spacing; t <= extent.max + spacing * 1e-9; t += spacing) {
    ticks.push(Number(t.toPrecision(12)));
  }
  return ticks;
}
