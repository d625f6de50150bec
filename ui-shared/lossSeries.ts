/**
 * The two loss series of a job, fed by training.log frames. Plain arrays and maps, mutated in
 * place: the view re-renders on animation frames, so 100,000 events never copy a 100,000-array.
 */
import { insertByStep, type ChartPoint } from "./chart.js";
import { isNumber } from "./eventLog.js";

export class LossSeries {
  /** Training loss, one vertex per frame with numeric `loss`, ascending by step. */
  readonly loss: ChartPoint[] = [];
  /** Eval loss, from frames with numeric `evalLoss` (including eval-only frames). */
  readonly evalLoss: ChartPoint[] = [];
  readonly lossAt = new Map<number, number>();
  readonly evalAt = new Map<number, number>();
  private mergedSteps: number[] | undefined;

  /** Adds a training.log payload; returns whether it carried a plottable value. */
  add(data: Record<string, unknown>): boolean {
    if (!isNumber(data.step)) return false;
    const step = data.step;
    let plotted = false;
    if (isNumber(data.loss)) {
      insertByStep(this.loss, { step, value: data.loss });
      this.lossAt.set(step, data.loss);
      plotted = true;
    }
    if (isNumber(data.evalLoss)) {
      insertByStep(this.evalLoss, { step, value: data.evalLoss });
      this.evalAt.set(step, data.evalLoss);
      plotted = true;
    }
    if (plotted) this.mergedSteps = undefined;
    return plotted;
  }

  get isEmpty(): boolean {
    return this.loss.length === 0 && this.evalLoss.length === 0;
  }

  /** Ascending steps of both series without duplicates (for hover lookup); cached until the next add. */
  steps(): number[] {
    this.mergedSteps ??= mergeSteps(this.loss, this.evalLoss);
    return this.mergedSteps;
  }
}

function mergeSteps(a: readonly ChartPoint[], b: readonly ChartPoint[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const next = j >= b.length || (i < a.length && a[i].step <= b[j].step) ? a[i++].step : b[j++].step;
    if (out[out.length - 1] !== next) out.push(next);
  }
  return out;
}
