/**
 * Exponential moving average for the chart's smoothing slider, as TensorBoard draws it: each point
 * is `weight * previous + (1 - weight) * value`, divided by `1 - weight^n` so the curve does not
 * start near zero (debiasing). Weight 0 is the raw series; the view keeps the raw line faint behind.
 */
import type { ChartPoint } from "./chart.js";

/** Slider range: 0 (off) to 0.99 (very smooth); 1 would freeze the curve at its first value. */
export const SMOOTHING_MAX = 0.99;

/** The smoothed series, one point per input point at the same step. Weight 0 returns the input itself. */
export function emaSmooth(points: readonly ChartPoint[], weight: number): readonly ChartPoint[] {
  if (!(weight > 0)) return points;
  const w = Math.min(weight, SMOOTHING_MAX);
  const out: ChartPoint[] = new Array(points.length);
  let accumulated = 0;
  let decay = 1; // weight^n, kept as a running product
  for (let i = 0; i < points.length; i++) {
    const p = points[i];
    accumulated = accumulated * w + (1 - w) * p.value;
    decay *= w;
    out[i] = { step: p.step, value: accumulated / (1 - decay) };
  }
  return out;
}
