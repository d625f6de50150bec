/** Words for a key's rules and its use against them, and usage summed per key, for the studio and VS Code. */
import type { Percentiles } from "../sdk/api/keys.js";
import type { DeploymentKey, KeyRules, UsageRange, UsageReport } from "../sdk/wire.js";

export const EXPIRY_CHOICES: readonly { label: string; ms: number | null }[] = [
  { label: "Never", ms: null },
  { label: "In 1 hour", ms: 3_600_000 },
  { label: "In 1 day", ms: 86_400_000 },
  { label: "In 7 days", ms: 7 * 86_400_000 },
  { label: "In 30 days", ms: 30 * 86_400_000 },
];

const n = (value: number) => value.toLocaleString("en-US");

/** The form's fields as the rules of a new key; a blank or zero field is no rule. */
export function rulesFromForm(
  form: { expiryMs: number | null; requestsPerMinute: string; tokensPerMinute: string; budgetTokens: string; budgetPeriod: "total" | "day" | "month" },
  nowMs: number,
): KeyRules {
  const whole = (text: string) => (/^\d+$/.test(text.trim()) && Number(text) > 0 ? Number(text) : null);
  const rpm = whole(form.requestsPerMinute);
  const tpm = whole(form.tokensPerMinute);
  const budget = whole(form.budgetTokens);
  return {
    ...(form.expiryMs !== null ? { expiresAt: new Date(nowMs + form.expiryMs).toISOString() } : {}),
    ...(rpm !== null || tpm !== null ? { limits: { requestsPerMinute: rpm, tokensPerMinute: tpm } } : {}),
    ...(budget !== null ? { budget: { tokens: budget, period: form.budgetPeriod } } : {}),
  };
}

/** A field that is neither blank nor a whole number from 1: what to say about it. */
export function ruleFieldProblem(text: string): string | undefined {
  return text.trim() === "" || (/^\d+$/.test(text.trim()) && Number(text) > 0) ? undefined : "a whole number from 1, or blank for none";
}

function inWords(ms: number): string {
  const minutes = Math.round(Math.abs(ms) / 60_000);
  if (minutes < 90) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.round(hours / 24)} days`;
}

/** The key's rules in short words: "expires in 59 min", "30 RPM", "100,000 tokens / month". */
export function describeRules(key: DeploymentKey, nowMs: number): string[] {
  const out: string[] = [];
  if (key.expiresAt) {
    const left = Date.parse(key.expiresAt) - nowMs;
    out.push(left > 0 ? `expires in ${inWords(left)}` : `expired ${inWords(left)} ago`);
  }
  if (key.limits.requestsPerMinute !== null) out.push(`${n(key.limits.requestsPerMinute)} RPM`);
  if (key.limits.tokensPerMinute !== null) out.push(`${n(key.limits.tokensPerMinute)} TPM`);
  if (key.budget) out.push(`${n(key.budget.tokens)} tokens${key.budget.period === "total" ? " in all" : ` / ${key.budget.period}`}`);
  return out;
}

/** The key's use against its rules: "3/30 requests this minute", "1,234/100,000 budget tokens". */
export function describeUse(key: DeploymentKey): string[] {
  const out: string[] = [];
  if (key.limits.requestsPerMinute !== null) out.push(`${n(key.usage.minuteRequests)}/${n(key.limits.requestsPerMinute)} requests this minute`);
  if (key.limits.tokensPerMinute !== null) out.push(`${n(key.usage.minuteTokens)}/${n(key.limits.tokensPerMinute)} tokens this minute`);
  if (key.budget) out.push(`${n(key.usage.budgetTokens)}/${n(key.budget.tokens)} budget tokens`);
  out.push(`${n(key.usage.requests)} requests, ${n(key.usage.promptTokens + key.usage.completionTokens)} tokens in all`);
  return out;
}

export const RANGE_CHOICES: readonly { range: UsageRange; label: string; per: string }[] = [
  { range: "hour", label: "Last hour", per: "minute" },
  { range: "day", label: "Last day", per: "15 minutes" },
  { range: "month", label: "Last 30 days", per: "day" },
];

export interface UsagePoint {
  start: string;
  requests: number;
  tokens: number;
  errors: number;
}

/** Every bucket of the report's range (the deployment's, or one key's), oldest first, with empty ones filled in. */
export function usageSeries(report: UsageReport, keyId?: string): UsagePoint[] {
  const fromMs = Date.parse(report.from);
  const count = Math.round((Date.parse(report.to) - fromMs) / (report.bucketSeconds * 1000));
  const points: UsagePoint[] = [];
  const index = new Map<string, UsagePoint>();
  for (let i = 0; i < count; i++) {
    const point = { start: new Date(fromMs + i * report.bucketSeconds * 1000).toISOString(), requests: 0, tokens: 0, errors: 0 };
    points.push(point);
    index.set(point.start, point);
  }
  for (const row of report.rows) {
    if (row.keyId !== (keyId ?? null)) continue;
    const point = index.get(row.start);
    if (!point) continue;
    point.requests += row.requests;
    point.tokens += row.promptTokens + row.completionTokens;
    point.errors += row.errors;
  }
  return points;
}

/** "429 ×3, 500 ×1"; "none" without errors. */
export function describeErrors(errorsByStatus: Record<string, number>): string {
  const entries = Object.entries(errorsByStatus).sort(([a], [b]) => Number(a) - Number(b));
  return entries.length ? entries.map(([status, count]) => `${status} ×${n(count)}`).join(", ") : "none";
}

/** "120 / 340 ms" (p50 / p95); "–" when nothing was measured. */
export function describePercentiles(p: Percentiles | null): string {
  return p ? `${n(Math.round(p.p50))} / ${n(Math.round(p.p95))} ms` : "–";
}
