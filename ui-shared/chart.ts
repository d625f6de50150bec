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
    for (const p of points) {
      if (p.value < min) min = p.value;
      if (p.value > max) max = p.value;
    }
  }
  if (min === Infinity) return undefined;
  return padFlat({ min, max });
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
function padFlat(extent: Extent): Extent {
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
 * vertex count is bounded by 4 x width.
 */
export function decimate(points: readonly ChartPoint[], steps: Extent, area: PlotArea): ChartPoint[] {
  if (points.length <= area.width * 4) return points.slice();
  const out: ChartPoint[] = [];
  let column = NaN;
  let first = 0;
  let minIndex = 0;
  let maxIndex = 0;
  const flush = (last: number) => {
    const picked = [first, minIndex, maxIndex, last].sort((a, b) => a - b);
    let previous = -1;
    for (const index of picked) {
      if (index !== previous) out.push(points[index]);
      previous = index;
    }
  };
  for (let i = 0; i < points.length; i++) {
    const c = Math.floor(xForStep(points[i].step, steps, area));
    if (c !== column) {
      if (i > 0) flush(i - 1);
      column = c;
      first = minIndex = maxIndex = i;
    } else {
      if (points[i].value < points[minIndex].value) minIndex = i;
      if (points[i].value > points[maxIndex].value) maxIndex = i;
    }
  }
  flush(points.length - 1);
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

/** Index of the element of the ascending `sorted` closest to `target` (ties go to the lower one); -1 when empty. */
export function nearestIndex(sorted: readonly number[], target: number): number {
  if (sorted.length === 0) return -1;
  let low = 0;
  let high = sorted.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (sorted[mid] < target) low = mid + 1;
    else high = mid;
  }
  // `low` is the first element >= target; its left neighbour may be closer.
  if (low > 0 && target - sorted[low - 1] <= sorted[low] - target) return low - 1;
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
  // Binary search for the first point at or after the step (O(log n), no copy of the series).
  let low = 0;
  let high = points.length - 1;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (points[mid].step < point.step) low = mid + 1;
    else high = mid;
  }
  if (points[low].step === point.step) points[low] = point;
  else points.splice(low, 0, point);
}

export interface HoverReadout {
  step: number;
  loss: number | undefined;
  evalLoss: number | undefined;
}

/**
 * Hover: the step nearest to `targetStep` among both series, and whichever values exist there.
 * `stepIndex` is the merged ascending list of steps; the maps give the value at an exact step.
 */
export function hoverReadout(
  targetStep: number,
  stepIndex: readonly number[],
  lossAt: ReadonlyMap<number, number>,
  evalAt: ReadonlyMap<number, number>,
): HoverReadout | undefined {
  const index = nearestIndex(stepIndex, targetStep);
  if (index < 0) return undefined;
  const step = stepIndex[index];
  return { step, loss: lossAt.get(step), evalLoss: evalAt.get(step) };
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
