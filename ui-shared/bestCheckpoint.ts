/**
 * The best adapter of a job: among the steps it saved an adapter at (checkpoints and the final
 * adapter), the one whose evaluation at that very step scored best on the job's metric (its
 * `earlyStopping.metric`, else eval loss). The job page marks it and the target picker offers it
 * first; a step that was saved but not evaluated cannot be judged and is passed over.
 */
import type { ChartPoint } from "./chart.js";
import { valueAtStep } from "./chart.js";
import { formatAccuracy, formatLossValue } from "./eventLog.js";

export type BestMetric = "evalLoss" | "evalTokenAccuracy";

export interface BestAdapter {
  step: number;
  metric: BestMetric;
  value: number;
  /** "eval loss 0.2478", "eval token accuracy 91.3%". */
  text: string;
}

/** The metric a job's best adapter is judged by: its config's `earlyStopping.metric`, else eval loss. */
export function bestMetricOf(config: Record<string, unknown> | undefined): BestMetric {
  const stopping = config?.earlyStopping as { metric?: unknown } | undefined;
  return stopping?.metric === "evalTokenAccuracy" ? "evalTokenAccuracy" : "evalLoss";
}

export function bestAdapter(
  series: Readonly<Record<BestMetric, readonly ChartPoint[]>>,
  savedSteps: readonly number[],
  metric: BestMetric,
): BestAdapter | undefined {
  let best: BestAdapter | undefined;
  for (const step of savedSteps) {
    const value = valueAtStep(series[metric], step);
    if (value === undefined || !Number.isFinite(value)) continue;
    // Ties go to the earlier step: the same score with less training.
    const better = best === undefined || (metric === "evalLoss" ? value < best.value : value > best.value) || (value === best.value && step < best.step);
    if (better)
      best = { step, metric, value, text: metric === "evalLoss" ? `eval loss ${formatLossValue(value)}` : `eval token accuracy ${formatAccuracy(value)}` };
  }
  return best;
}
