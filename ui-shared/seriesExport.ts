/**
 * The job chart's "Download CSV / JSON": every metric of the job, one row per step, raw values
 * (never the smoothed or zoomed view), so a spreadsheet or a notebook gets exactly what was logged.
 */
import type { ChartPoint } from "./chart.js";
import { METRIC_IDS, type MetricId } from "./jobSeries.js";
import { shortJobId } from "./targetSummary.js";

/** One step of the export; a metric the step did not log is absent (an empty CSV cell, no JSON key). */
export type MetricRow = { step: number } & Partial<Record<MetricId, number>>;

/** Merges the ascending series into rows by step, ascending. */
export function metricRows(series: Readonly<Record<MetricId, readonly ChartPoint[]>>): MetricRow[] {
  const rows: MetricRow[] = [];
  const next = METRIC_IDS.map(() => 0);
  for (;;) {
    let step = Infinity;
    METRIC_IDS.forEach((id, k) => {
      const p = series[id][next[k]];
      if (p !== undefined && p.step < step) step = p.step;
    });
    if (step === Infinity) return rows;
    const row: MetricRow = { step };
    METRIC_IDS.forEach((id, k) => {
      const p = series[id][next[k]];
      if (p !== undefined && p.step === step) {
        row[id] = p.value;
        next[k]++;
      }
    });
    rows.push(row);
  }
}

/** RFC 4180 CSV with a header row: `step,loss,evalLoss,learningRate,tokensPerSecond,tokenAccuracy,evalTokenAccuracy`, full precision, LF line ends. */
export function metricsCsv(rows: readonly MetricRow[]): string {
  const lines = [["step", ...METRIC_IDS].join(",")];
  for (const row of rows) lines.push([row.step, ...METRIC_IDS.map((id) => row[id] ?? "")].join(","));
  return lines.join("\n") + "\n";
}

/** `{"job": {id, name}, "metrics": [...ids], "rows": [...]}`: the rows self-describing, one job per file. */
export function metricsJson(job: { id: string; name?: string }, rows: readonly MetricRow[]): string {
  return JSON.stringify({ job: { id: job.id, name: job.name ?? null }, metrics: METRIC_IDS, rows }) + "\n";
}

/** `<job name>-<first 8 of id>-metrics.<ext>`, the name reduced to characters every file system takes. */
export function metricsFileName(job: { id: string; name?: string }, extension: "csv" | "json"): string {
  const base = (job.name ?? "job")
    .normalize("NFKD")
    .replace(/[^\w.-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 60);
  return `${base || "job"}-${shortJobId(job.id)}-metrics.${extension}`;
}
