/**
 * Admission of requests made with a key that has limits or a budget, counted in the store so that
 * every cloud instance sharing a PostgreSQL database enforces the same numbers.
 *
 * Admission is one conditional UPDATE of the key's meter row (atomic on SQLite and PostgreSQL:
 * racing requests queue on the row and each sees the count the one before left):
 * - the minute window starts with the first request after the previous one ended; the request is
 *   admitted while the window has served fewer than `requestsPerMinute` requests and counted fewer
 *   than `tokensPerMinute` tokens, so a window serves exactly the limit;
 * - a budget admits while the period's spent tokens plus the tokens held by requests in flight are
 *   below it, and the admitted request holds its most (`reserve`: prompt estimate + max tokens).
 *   Each request admitted saw the budget not yet reached, so racing requests overspend it by at
 *   most the real tokens of the last one admitted.
 * A request returns its hold when it ends (`settle`) and its real tokens count then. Holds count
 * until `HOLD_TTL_MS` after the last admission: holds a crashed instance never returned stop
 * refusing the key once it has been that long without a new request (until then they refuse early,
 * never overspend).
 */
import { sql } from "kysely";
import type { KeyBudget } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { budgetPeriodStart, budgetResetMs, MINUTE_MS } from "../domain/keyPeriods.js";
import { EdgeError } from "./errors.js";

export interface KeyRulesState {
  id: string;
  prefix: string;
  /** Epoch ms after which the key is refused; null: never. */
  expiresAtMs: number | null;
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  budget: KeyBudget | null;
}

export const isMetered = (key: KeyRulesState) => key.requestsPerMinute !== null || key.tokensPerMinute !== null || key.budget !== null;

/** Longer than any request runs (upstream timeouts, max_tokens): a hold older than this is a leaked one. */
export const HOLD_TTL_MS = 15 * 60_000;

export interface Admission {
  windowStart: number;
  holdEpoch: number;
  periodStart: string;
  reserved: number;
  /** x-ratelimit-* headers of the answer, as OpenAI sends them. */
  headers: Record<string, string>;
}

interface MeterRow {
  hold_epoch: number | string;
  window_start: number | string;
  window_requests: number | string;
  window_tokens: number | string;
  period_start: string;
  period_tokens: number | string;
  reserved_tokens: number | string;
}

export class KeyMeter {
  constructor(
    private readonly ctx: CloudContext,
    /** The clock windows are counted on (tests move windows through the store instead). */
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits one request holding `reserve` tokens, or throws the 429 that says which rule refused it. */
  async admit(key: KeyRulesState, reserve: number): Promise<Admission> {
    const now = this.now();
    const cutoff = now - MINUTE_MS;
    const period = key.budget ? budgetPeriodStart(key.budget.period, now) : "";
    const hold = key.budget ? reserve : 0;
    const windowEnded = sql`window_start <= cast(${cutoff} as bigint)`;
    const holdsStale = sql`held_until < cast(${now} as bigint)`;
    const liveHolds = sql`(case when ${holdsStale} then 0 else reserved_tokens end)`;
    const conditions = [sql`key_id = ${key.id}`];
    if (key.requestsPerMinute !== null) conditions.push(sql`(${windowEnded} or window_requests < ${key.requestsPerMinute})`);
    if (key.tokensPerMinute !== null) conditions.push(sql`(${windowEnded} or window_tokens < cast(${key.tokensPerMinute} as bigint))`);
    if (key.budget) conditions.push(sql`(case when period_start = ${period} then period_tokens else 0 end) + ${liveHolds} < cast(${key.budget.tokens} as bigint)`);
    const result = await sql<MeterRow>`
      update deployment_key_meters set
        window_start = case when ${windowEnded} then cast(${now} as bigint) else window_start end,
        window_requests = case when ${windowEnded} then 1 else window_requests + 1 end,
        window_tokens = case when ${windowEnded} then 0 else window_tokens end,
        period_tokens = case when period_start = ${period} then period_tokens else 0 end,
        period_start = ${period},
        reserved_tokens = ${hold > 0 ? sql`${liveHolds} + cast(${hold} as bigint)` : sql`reserved_tokens`},
        hold_epoch = ${hold > 0 ? sql`case when ${holdsStale} then hold_epoch + 1 else hold_epoch end` : sql`hold_epoch`},
        held_until = ${hold > 0 ? sql`cast(${now + HOLD_TTL_MS} as bigint)` : sql`held_until`}
      where ${sql.join(conditions, sql` and `)}
      returning hold_epoch, window_start, window_requests, window_tokens, period_start, period_tokens, reserved_tokens`.execute(this.ctx.db);
    const row = result.rows[0];
    if (row) return { windowStart: Number(row.window_start), holdEpoch: Number(row.hold_epoch), periodStart: period, reserved: hold, headers: rateLimitHeaders(key, row, now) };
    // Read the clock again: the row may have been changed by a request admitted after `now` was read.
    throw await this.refusal(key, Math.max(now, this.now()), period);
  }

  /** Returns the request's hold and counts its real tokens in its window and budget period. */
  async settle(key: KeyRulesState, admission: Admission, tokens: number): Promise<void> {
    await sql`
      update deployment_key_meters set
        reserved_tokens = case when hold_epoch = ${admission.holdEpoch} then reserved_tokens - cast(${admission.reserved} as bigint) else reserved_tokens end,
        period_tokens = case when period_start = ${admission.periodStart} then period_tokens + cast(${tokens} as bigint) else period_tokens end,
        window_tokens = case when window_start = cast(${admission.windowStart} as bigint) then window_tokens + cast(${tokens} as bigint) else window_tokens end
      where key_id = ${key.id}`.execute(this.ctx.db);
  }

  /** Why the key was refused, read after the fact (another request may have changed the row since: then any limit reached is named). */
  private async refusal(key: KeyRulesState, now: number, period: string): Promise<EdgeError> {
    const row = await this.ctx.db.selectFrom("deployment_key_meters").selectAll().where("key_id", "=", key.id).executeTakeFirst();
    if (!row) return new EdgeError(401, "invalid_api_key", "this API key no longer exists");
    const headers = rateLimitHeaders(key, row, now);
    const windowOpen = Number(row.window_start) > now - MINUTE_MS;
    // Another instance's clock may run a little ahead: a window never lasts more than a minute.
    const windowResetMs = windowOpen ? Math.min(MINUTE_MS, Number(row.window_start) + MINUTE_MS - now) : 0;
    if (key.budget) {
      const spent = row.period_start === period ? Number(row.period_tokens) : 0;
      if (spent >= key.budget.tokens) {
        const reset = budgetResetMs(key.budget.period, now);
        const when = reset === null ? "it does not renew" : `it renews in ${formatResetDuration(reset)}`;
        return new EdgeError(429, "insufficient_quota", `You exceeded your current quota: this key's budget of ${key.budget.tokens} tokens per ${key.budget.period === "total" ? "key" : key.budget.period} is spent (${when}).`, null, reset === null ? undefined : Math.ceil(reset / 1000), "insufficient_quota", headers);
      }
    }
    if (windowOpen && key.requestsPerMinute !== null && Number(row.window_requests) >= key.requestsPerMinute) {
      return rateLimited("requests", `requests per min (RPM): Limit ${key.requestsPerMinute}, Used ${row.window_requests}, Requested 1`, windowResetMs, headers);
    }
    if (windowOpen && key.tokensPerMinute !== null && Number(row.window_tokens) >= key.tokensPerMinute) {
      return rateLimited("tokens", `tokens per min (TPM): Limit ${key.tokensPerMinute}, Used ${row.window_tokens}`, windowResetMs, headers);
    }
    // The budget is held by requests in flight: it may free up when they end.
    return rateLimited("tokens", `tokens held by requests in flight: Budget ${key.budget?.tokens ?? 0}, Held ${row.reserved_tokens}`, 1000, headers);
  }
}

function rateLimited(type: "requests" | "tokens", what: string, resetMs: number, headers: Record<string, string>): EdgeError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new EdgeError(429, "rate_limit_exceeded", `Rate limit reached for this key on ${what}. Please try again in ${formatResetDuration(resetMs)}.`, null, seconds, type, headers);
}

/** OpenAI's x-ratelimit-* headers for the limits the key has. */
function rateLimitHeaders(key: KeyRulesState, row: MeterRow, now: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const windowOpen = Number(row.window_start) > now - MINUTE_MS;
  const reset = formatResetDuration(windowOpen ? Math.min(MINUTE_MS, Number(row.window_start) + MINUTE_MS - now) : 0);
  if (key.requestsPerMinute !== null) {
    const used = windowOpen ? Number(row.window_requests) : 0;
    headers["x-ratelimit-limit-requests"] = String(key.requestsPerMinute);
    headers["x-ratelimit-remaining-requests"] = String(Math.max(0, key.requestsPerMinute - used));
    headers["x-ratelimit-reset-requests"] = reset;
  }
  if (key.tokensPerMinute !== null) {
    const used = windowOpen ? Number(row.window_tokens) : 0;
    headers["x-ratelimit-limit-tokens"] = String(key.tokensPerMinute);
    headers["x-ratelimit-remaining-tokens"] = String(Math.max(0, key.tokensPerMinute - used));
    headers["x-ratelimit-reset-tokens"] = reset;
  }
  return headers;
}

/** A duration as OpenAI writes its reset headers: "250ms", "17s", "6m0s", "1h2m3s". */
export function formatResetDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
