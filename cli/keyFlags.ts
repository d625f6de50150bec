/** `svc keys` flags read into key rules: durations (7d, 1h, 0), limits, budgets ("100000/month"), "none" to remove. */
import type { KeyRules } from "../sdk/wire.js";
import { CliError } from "./output.js";

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** "90s", "15m", "1h", "7d", "2w", or "0"; milliseconds. */
export function parseDuration(value: string, flag: string): number {
  if (value.trim() === "0") return 0;
  const match = /^(\d+)\s*([smhdw])$/.exec(value.trim());
  if (!match) throw new CliError(`${flag} "${value}" is not a duration: a number and a unit s, m, h, d or w (e.g. 7d), or 0`, 2);
  return Number(match[1]) * UNIT_MS[match[2]];
}

function positive(value: string, flag: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new CliError(`${flag} must be a whole number from 1, or none`, 2);
  return Number(value);
}

export interface KeyFlagValues {
  "expires-in"?: string;
  "expires-at"?: string;
  rpm?: string;
  tpm?: string;
  budget?: string;
}

/**
 * The rules the flags name (absent flags: unchanged). `--rpm`/`--tpm` change one limit each, so on
 * an update the other limit is taken from `current`.
 */
export function rulesFromFlags(
  values: KeyFlagValues,
  nowMs: number,
  current: { requestsPerMinute: number | null; tokensPerMinute: number | null } = { requestsPerMinute: null, tokensPerMinute: null },
): KeyRules {
  const rules: KeyRules = {};
  if (values["expires-in"] !== undefined && values["expires-at"] !== undefined) throw new CliError("give --expires-in or --expires-at, not both", 2);
  if (values["expires-in"] !== undefined) {
    rules.expiresAt = values["expires-in"] === "none" ? null : new Date(nowMs + parseDuration(values["expires-in"], "--expires-in")).toISOString();
  }
  if (values["expires-at"] !== undefined) {
    if (values["expires-at"] !== "none" && !Number.isFinite(Date.parse(values["expires-at"])))
      throw new CliError(`--expires-at "${values["expires-at"]}" is not an ISO 8601 date-time`, 2);
    rules.expiresAt = values["expires-at"] === "none" ? null : new Date(values["expires-at"]).toISOString();
  }
  if (values.rpm !== undefined || values.tpm !== undefined) {
    const read = (v: string | undefined, flag: string, now: number | null) => (v === undefined ? now : v === "none" ? null : positive(v, flag));
    rules.limits = {
      requestsPerMinute: read(values.rpm, "--rpm", current.requestsPerMinute),
      tokensPerMinute: read(values.tpm, "--tpm", current.tokensPerMinute),
    };
  }
  if (values.budget !== undefined) {
    if (values.budget === "none") rules.budget = null;
    else {
      const match = /^(\d+)(?:\/(total|day|month))?$/.exec(values.budget.trim());
      if (!match || Number(match[1]) < 1)
        throw new CliError(`--budget "${values.budget}": write TOKENS or TOKENS/day, TOKENS/month, TOKENS/total (e.g. 100000/month), or none`, 2);
      rules.budget = { tokens: Number(match[1]), period: (match[2] ?? "total") as "total" | "day" | "month" };
    }
  }
  return rules;
}
