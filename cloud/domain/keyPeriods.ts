/** The windows a key's rules count in: a minute from the window's first request, and budget periods in UTC. */
import type { KeyBudget } from "../../sdk/wire.js";

export const MINUTE_MS = 60_000;

/** The period a budget's counters belong to at `nowMs`: "" for a total budget, "2026-11-27" per day, "2026-11" per month. */
export function budgetPeriodStart(period: KeyBudget["period"], nowMs: number): string {
  if (period === "total") return "";
  const iso = new Date(nowMs).toISOString();
  return period === "day" ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** Milliseconds until the budget's period ends (a total budget never renews: null). */
export function budgetResetMs(period: KeyBudget["period"], nowMs: number): number | null {
  if (period === "total") return null;
  const d = new Date(nowMs);
  const end = period === "day" ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return end - nowMs;
}
