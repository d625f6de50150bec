/**
 * Compare runs: 2 to 5 jobs picked in the Jobs list, their loss curves overlaid (one colour per
 * job) and their configurations side by side. This module holds the rules the view follows: the
 * selection limits, each job's colour, and the summary rows read from each job's series.
 */
import type { Job } from "../sdk/wire.js";
import type { ChartPoint } from "./chart.js";
import { formatAccuracy, formatLossValue } from "./eventLog.js";
import { jobDurationText } from "./jobFacts.js";

export const COMPARE_MIN = 2;
/** Five: beyond that the overlaid curves stop being readable (and the palette has five distinct colours). */
export const COMPARE_MAX = 5;

/** Theme colours (VS Code chart palette) for the 1st..5th job; the SPA's fallback theme defines them too. */
export const COMPARE_COLORS = [
  "--vscode-charts-blue",
  "--vscode-charts-orange",
  "--vscode-charts-green",
  "--vscode-charts-purple",
  "--vscode-charts-red",
] as const;

/** What the compare view says when the id list cannot be compared, or undefined when it can. */
export function compareSelectionProblem(ids: readonly string[]): string | undefined {
  if (ids.length < COMPARE_MIN) return `Pick at least ${COMPARE_MIN} jobs to compare (you picked ${ids.length}).`;
  if (ids.length > COMPARE_MAX) return `Compare at most ${COMPARE_MAX} jobs at once (you picked ${ids.length}).`;
  return undefined;
}

/**
 * Toggles `id` in the selection, in click order; refuses (returns the selection unchanged) a sixth.
 * Returns a new array so Svelte sees the change.
 */
export function toggleSelection(selection: readonly string[], id: string): string[] {
  if (selection.includes(id)) return selection.filter((s) => s !== id);
  if (selection.length >= COMPARE_MAX) return [...selection];
  return [...selection, id];
}

export interface SummaryRow {
  label: string;
  values: string[];
}

export interface RunSeries {
  loss: readonly ChartPoint[];
  evalLoss: readonly ChartPoint[];
  evalTokenAccuracy?: readonly ChartPoint[];
}

/**
 * Status, duration, steps, final training loss, final and best eval loss, and, once a run logged
 * it, final and best eval token accuracy: the first rows of the table.
 */
export function summaryRows(jobs: readonly (Job | undefined)[], series: readonly RunSeries[], now: number = Date.now()): SummaryRow[] {
  const last = (points: readonly ChartPoint[]) => points[points.length - 1];
  const loss = (value: number | undefined) => (value === undefined ? "—" : formatLossValue(value));
  const accuracy = (value: number | undefined) => (value === undefined ? "—" : formatAccuracy(value));
  const accuracies = series.map((s) => s.evalTokenAccuracy ?? []);
  const accuracyRows: SummaryRow[] = accuracies.some((a) => a.length > 0)
    ? [
        { label: "Final eval token accuracy", values: accuracies.map((a) => accuracy(last(a)?.value)) },
        {
          label: "Best eval token accuracy",
          values: accuracies.map((a) => accuracy(a.length ? a.reduce((best, p) => Math.max(best, p.value), -Infinity) : undefined)),
        },
      ]
    : [];
  return [
    { label: "Status", values: jobs.map((j) => j?.status ?? "—") },
    { label: "Duration", values: jobs.map((j) => jobDurationText(j, now)) },
    { label: "Steps", values: series.map((s) => String(last(s.loss)?.step ?? last(s.evalLoss)?.step ?? "—")) },
    { label: "Final loss", values: series.map((s) => loss(last(s.loss)?.value)) },
    { label: "Final eval loss", values: series.map((s) => loss(last(s.evalLoss)?.value)) },
    {
      label: "Best eval loss",
      values: series.map((s) => loss(s.evalLoss.length ? s.evalLoss.reduce((best, p) => Math.min(best, p.value), Infinity) : undefined)),
    },
    ...accuracyRows,
  ];
}
