/**
 * A usage report as CSV, one line per bucket: the cloud's export route, the studio's download and `svc keys usage`
 * write the same columns. Pure, so the browser bundles it.
 */
import type { UsageReport } from "./api/keys.js";

export const USAGE_CSV_HEADER =
  "start,key_id,key_prefix,requests,errors,errors_by_status,prompt_tokens,completion_tokens,latency_p50_ms,latency_p95_ms,ttft_p50_ms,ttft_p95_ms";

/** `errors_by_status` is "429:3 500:1" (space-separated, so the cell needs no quoting); the deployment's lines have empty key cells. */
export function usageReportCsv(report: UsageReport): string {
  const lines = [USAGE_CSV_HEADER];
  for (const r of report.rows) {
    const statuses = Object.entries(r.errorsByStatus)
      .map(([status, count]) => `${status}:${count}`)
      .join(" ");
    lines.push(
      [
        r.start,
        r.keyId ?? "",
        r.keyPrefix ?? "",
        r.requests,
        r.errors,
        statuses,
        r.promptTokens,
        r.completionTokens,
        r.latencyMs?.p50 ?? "",
        r.latencyMs?.p95 ?? "",
        r.timeToFirstTokenMs?.p50 ?? "",
        r.timeToFirstTokenMs?.p95 ?? "",
      ].join(","),
    );
  }
  return `${lines.join("\n")}\n`;
}

/** The file name of an export: "usage-support-bot-day.csv". */
export function usageFileName(slug: string, range: UsageReport["range"], format: "csv" | "json"): string {
  return `usage-${slug}-${range}.${format}`;
}
