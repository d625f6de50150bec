/**
 * Everything one plot of the job charts draws, computed from its series and the viewer's choices
 * (step window, y scale, smoothing): SVG paths, markers and ticks. The Svelte plot only renders
 * this, so the chart's rules (SPEC section 6, rule 3, and the zoom / log / EMA extras) are tested
 * here without a browser.
 *
 * Cost: a window lookup is two binary searches, the y range one pass over the visible points, and
 * decimation one more; on a linear scale no series is copied, which keeps the first render of a
 * 100,000-point job cheap.
 */
import {
  decimate,
  linePath,
  niceTicks,
  padFlat,
  valueRange,
  windowIndices,
  xForStep,
  yForValue,
  type ChartPoint,
  type Extent,
  type PlotArea,
} from "./chart.js";
import { scaleTicks, tickLabel, toScale, type ValueScale } from "./chartScale.js";

export interface PlotSeriesInput {
  /** Series id, echoed in the layout (and the SVG's `data-series`). */
  id: string;
  /** The raw points, ascending by step. */
  points: readonly ChartPoint[];
  /** The smoothed points (same steps), drawn over a faint raw line; omitted when smoothing is off. */
  smoothed?: readonly ChartPoint[];
  /**
   * `every`: a marker on each drawn vertex (the eval series). `lone`: a marker only when the series
   * has a single point, since a line through one vertex draws nothing.
   */
  markers: "every" | "lone";
}

export interface PlotOptions {
  area: PlotArea;
  /** The step window shown (the full extent, or the zoom). */
  steps: Extent;
  scale: ValueScale;
  /** How many y ticks to aim for (small plots want fewer). */
  yTickCount?: number;
}

export interface PlotMarker {
  x: number;
  y: number;
}

export interface PlotSeriesLayout {
  id: string;
  /** The raw line (faint under a smoothed one). Empty when the series has nothing to draw. */
  path: string;
  /** The smoothed line, when smoothing is on. */
  smoothedPath?: string;
  markers: PlotMarker[];
}

export interface PlotLayout {
  area: PlotArea;
  steps: Extent;
  /** y range in scale space (the values, or their log10). */
  values: Extent;
  scale: ValueScale;
  series: PlotSeriesLayout[];
  yTicks: { y: number; label: string }[];
  xTicks: { x: number; label: string; anchor: "middle" | "end" }[];
  /** Points in the window a log scale cannot place (zero or negative), so the view can say so. */
  unplottable: number;
}

/** Undefined when no series has a point the plot can place in the window. */
export function layoutPlot(inputs: readonly PlotSeriesInput[], options: PlotOptions): PlotLayout | undefined {
  const { area, steps, scale } = options;
  // Per series: the widened window, in scale space (a log scale copies only the window).
  const prepared = inputs.map((input) => {
    const raw = inScale(input.points, steps, scale);
    const smoothed = input.smoothed ? inScale(input.smoothed, steps, scale) : undefined;
    return { input, raw, smoothed };
  });
  let min = Infinity;
  let max = -Infinity;
  let unplottable = 0;
  for (const { raw, smoothed } of prepared) {
    unplottable += raw.dropped;
    // The y range follows the points inside the window (the ones just outside are off screen).
    for (const part of smoothed ? [raw, smoothed] : [raw]) {
      const inside = part.first < part.end ? valueRange(part.points, part.first, part.end) : valueRange(part.points, part.from, part.to);
      if (inside.min < min) min = inside.min;
      if (inside.max > max) max = inside.max;
    }
  }
  if (min === Infinity) return undefined;
  const values = padFlat({ min, max });

  const series = prepared.map(({ input, raw, smoothed }): PlotSeriesLayout => {
    const drawn = decimate(raw.points, steps, area, raw.from, raw.to);
    const markers =
      input.markers === "every" || input.points.length === 1
        ? drawn.map((p) => ({ x: xForStep(p.step, steps, area), y: yForValue(p.value, values, area) }))
        : [];
    return {
      id: input.id,
      path: linePath(drawn, steps, values, area),
      smoothedPath: smoothed ? linePath(decimate(smoothed.points, steps, area, smoothed.from, smoothed.to), steps, values, area) : undefined,
      markers: input.markers === "lone" && input.points.length !== 1 ? [] : markers,
    };
  });

  const yTicks = scaleTicks(values, scale, options.yTickCount ?? 5)
    .map((value) => ({ value, at: toScale(value, scale) }))
    .filter(({ at }) => at >= values.min && at <= values.max)
    .map(({ value, at }) => ({ y: yForValue(at, values, area), label: tickLabel(value) }));
  const right = area.left + area.width;
  const xTicks = niceTicks(steps, Math.max(2, Math.floor(area.width / 90)))
    .filter((t) => Number.isInteger(t))
    .map((t) => {
      const x = xForStep(t, steps, area);
      // Labels near the right edge anchor at their end so wide step numbers are not clipped.
      return { x, label: String(t), anchor: x > right - 24 ? ("end" as const) : ("middle" as const) };
    });
  return { area, steps, values, scale, series, yTicks, xTicks, unplottable };
}

interface ScaledWindow {
  points: readonly ChartPoint[];
  /** Indices into `points`, as in `windowIndices`. */
  first: number;
  end: number;
  from: number;
  to: number;
  /** Points of the window left out (log scale, value <= 0). */
  dropped: number;
}

/** The window of a series in scale space: the series itself on a linear scale, a log10 copy of the window otherwise. */
function inScale(points: readonly ChartPoint[], steps: Extent, scale: ValueScale): ScaledWindow {
  const w = windowIndices(points, steps);
  if (scale === "linear") return { points, ...w, dropped: 0 };
  const out: ChartPoint[] = [];
  let first = -1;
  let end = 0;
  let dropped = 0;
  for (let i = w.from; i < w.to; i++) {
    const at = toScale(points[i].value, scale);
    const inside = i >= w.first && i < w.end;
    if (Number.isNaN(at)) {
      if (inside) dropped++;
      continue;
    }
    if (inside) {
      if (first < 0) first = out.length;
      end = out.length + 1;
    }
    out.push({ step: points[i].step, value: at });
  }
  return { points: out, first: first < 0 ? 0 : first, end: first < 0 ? 0 : end, from: 0, to: out.length, dropped };
}
