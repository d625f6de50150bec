/** Words for a key's rules and its use against them, and usage summed per key, for the studio and VS Code. */
import type { DeploymentKey, KeyRules, UsageRow } from "../sdk/wire.js";

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

export type UsageRange = "hour" | "day";

export interface UsageBucket {
  minute: string;
  requests: number;
  tokens: number;
}

/** Per minute over the range (all keys, or one), oldest first, with empty minutes filled in. */
export function usageSeries(rows: UsageRow[], range: UsageRange, nowMs: number, keyId?: string): UsageBucket[] {
  const minutes = range === "hour" ? 60 : 1440;
  const step = range === "hour" ? 1 : 30;
  const buckets: UsageBucket[] = [];
  const index = new Map<string, UsageBucket>();
  const first = Math.floor(nowMs / 60_000) - minutes + 1;
  for (let m = first; m < first + minutes; m += step) {
    const bucket = { minute: new Date(m * 60_000).toISOString().slice(0, 16), requests: 0, tokens: 0 };
    buckets.push(bucket);
    for (let k = 0; k < step; k++) index.set(new Date((m + k) * 60_000).toISOString().slice(0, 16), bucket);
  }
  for (const row of rows) {
    if (keyId && row.keyId !== keyId) continue;
    const bucket = index.get(row.minute);
    if (!bucket) continue;
    bucket.requests += row.requests;
    bucket.tokens += row.promptTokens + row.completionTokens;
  }
  return buckets;
}
