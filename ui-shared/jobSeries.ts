/**
 * The metric series of a job, fed by training.log frames (`TrainingLogData` in sdk/wire.ts): the
 * two losses of SPEC section 6 and, beyond it, the learning rate, tokens/s and token accuracy the
 * trainer reports every step (eval token accuracy on evaluation steps). Plain arrays, mutated in place: the view re-renders on animation frames, so 100,000
 * events never copy a 100,000-array. Values are looked up by binary search, not kept in maps, so
 * a long history costs one small object per point and nothing more.
 */
import { insertByStep, type ChartPoint } from "./chart.js";
import { isNumber } from "./eventLog.js";

/** The series a training.log frame can carry, by their payload field names. */
export const METRIC_IDS = ["loss", "evalLoss", "learningRate", "tokensPerSecond", "tokenAccuracy", "evalTokenAccuracy"] as const;
export type MetricId = (typeof METRIC_IDS)[number];

/** Readable names, for legends, readouts and export headers' documentation. */
export const METRIC_LABELS: Record<MetricId, string> = {
  loss: "Training loss",
  evalLoss: "Eval loss",
  learningRate: "Learning rate",
  tokensPerSecond: "Tokens/s",
  tokenAccuracy: "Token accuracy",
  evalTokenAccuracy: "Eval token accuracy",
};

export class JobSeries {
  /** Training loss, one vertex per frame with numeric `loss`, ascending by step. */
  readonly loss: ChartPoint[] = [];
  /** Eval loss, from frames with numeric `evalLoss` (including eval-only frames). */
  readonly evalLoss: ChartPoint[] = [];
  readonly learningRate: ChartPoint[] = [];
  readonly tokensPerSecond: ChartPoint[] = [];
  /** Mean token accuracy of each step's batch, and of the eval set on evaluation steps (0 to 1). */
  readonly tokenAccuracy: ChartPoint[] = [];
  readonly evalTokenAccuracy: ChartPoint[] = [];
  private mergedSteps: number[] | undefined;

  /** Adds a training.log payload; returns whether it carried a loss the chart plots (SPEC's placeholder rule). */
  add(data: Record<string, unknown>): boolean {
    const step = data.step;
    if (!isNumber(step)) return false;
    let plotted = false;
    if (isNumber(data.loss)) {
      insertByStep(this.loss, { step, value: data.loss });
      plotted = true;
    }
    if (isNumber(data.evalLoss)) {
      insertByStep(this.evalLoss, { step, value: data.evalLoss });
      plotted = true;
    }
    if (isNumber(data.learningRate)) insertByStep(this.learningRate, { step, value: data.learningRate });
    if (isNumber(data.tokensPerSecond)) insertByStep(this.tokensPerSecond, { step, value: data.tokensPerSecond });
    if (isNumber(data.tokenAccuracy)) insertByStep(this.tokenAccuracy, { step, value: data.tokenAccuracy });
    if (isNumber(data.evalTokenAccuracy)) insertByStep(this.evalTokenAccuracy, { step, value: data.evalTokenAccuracy });
    if (plotted) this.mergedSteps = undefined;
    return plotted;
  }

  /** True until a frame with a numeric loss or evalLoss arrived (the chart shows its placeholder). */
  get isEmpty(): boolean {
    return this.loss.length === 0 && this.evalLoss.length === 0;
  }

  /** Ascending steps of both losses without duplicates (for hover lookup); cached until the next add. */
  steps(): number[] {
    this.mergedSteps ??= mergeSteps(this.loss, this.evalLoss);
    return this.mergedSteps;
  }
}

/** Ascending, duplicate-free steps of several ascending series. */
export function mergeSteps(...series: readonly (readonly ChartPoint[])[]): number[] {
  if (series.length === 1) return series[0].map((p) => p.step);
  let out: number[] = [];
  for (const points of series) {
    const merged: number[] = [];
    let i = 0;
    let j = 0;
    while (i < out.length || j < points.length) {
      const next = j >= points.length || (i < out.length && out[i] <= points[j].step) ? out[i++] : points[j++].step;
      if (merged[merged.length - 1] !== next) merged.push(next);
    }
    out = merged;
  }
  return out;
}
