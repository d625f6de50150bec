/**
 * Admission of requests made with a key that has limits or a budget, counted in the store so that
 * every cloud instance sharing a PostgreSQL database enforces the same numbers.
 *
 * Admissions are decided in batches, one short transaction per key and batch: the requests of a
 * key that arrive together (the same turn of the event loop, or while the key's previous batch was
 * being written) read the key's meter row once, locked (PostgreSQL: FOR UPDATE; SQLite: one writer),
 * are decided one after the other in arrival order as if each were alone, and the row is written
 * back once. The store still decides every admission, so the numbers hold across instances, and a
 * request costs a share of one transaction instead of a statement of its own.
 * - the minute window starts with the first request after the previous one ended; the request is
 *   admitted while the window has served fewer than `requestsPerMinute` requests and counted fewer
 *   than `tokensPerMinute` tokens, so a window serves exactly the limit;
 * - a budget admits while the period's spent tokens plus the tokens held by requests in flight are
 *   below it, and the admitted request holds its most (`reserve`: prompt estimate + max tokens).
 *   Each request admitted saw the budget not yet reached, so racing requests overspend it by at
 *   most the real tokens of the last one admitted.
 * A request returns its hold when it ends (`settle`) and its real tokens count then: settlements
 * ride with the key's next batch, applied before its admissions are decided, or are written on
 * their own after `SETTLE_DELAY_MS` when no request of the key comes (until then the hold refuses
 * early, never overspends). Holds count until `HOLD_TTL_MS` after the last admission: holds a
 * crashed instance never returned stop refusing the key once it has been that long without a new
 * request (until then they refuse early, never overspend).
 */
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
/** How long a settlement waits for the key's next batch before it is written on its own. */
export const SETTLE_DELAY_MS = 50;

export interface Admission {
  windowStart: number;
  holdEpoch: number;
  periodStart: string;
  reserved: number;
  /** x-ratelimit-* headers of the answer, as OpenAI sends them. */
  headers: Record<string, string>;
}

/** A key's meter row, as numbers. */
interface Meter {
  hold_epoch: number;
  window_start: number;
  window_requests: number;
  window_tokens: number;
  period_start: string;
  period_tokens: number;
  reserved_tokens: number;
  held_until: number;
}

interface Waiting {
  key: KeyRulesState;
  reserve: number;
  resolve: (admission: Admission) => void;
  reject: (err: unknown) => void;
}

interface Settlement {
  admission: Admission;
  tokens: number;
  done: () => void;
}

/** What is queued for one key until its next batch. */
interface KeyQueue {
  waiting: Waiting[];
  settlements: Settlement[];
  /** A batch of this key is being written: what arrives meanwhile waits for the next one. */
  running: boolean;
  scheduled: boolean;
  settleTimer: NodeJS.Timeout | null;
}

export class KeyMeter {
  private readonly queues = new Map<string, KeyQueue>();
  private closed = false;

  constructor(
    private readonly ctx: CloudContext,
    /** The clock windows are counted on (tests move windows through the store instead). */
    private readonly now: () => number = Date.now,
  ) {}

  /** Admits one request holding `reserve` tokens, or throws the 429 that says which rule refused it. */
  admit(key: KeyRulesState, reserve: number): Promise<Admission> {
    return new Promise((resolve, reject) => {
      const queue = this.queue(key.id);
      queue.waiting.push({ key, reserve, resolve, reject });
      this.schedule(key.id, queue);
    });
  }

  /** Returns the request's hold and counts its real tokens in its window and budget period. */
  settle(key: KeyRulesState, admission: Admission, tokens: number): Promise<void> {
    return new Promise((done) => {
      const queue = this.queue(key.id);
      queue.settlements.push({ admission, tokens, done });
      this.settleLater(key.id, queue);
    });
  }

  /** Writes the key's settlements after SETTLE_DELAY_MS unless a batch takes them first. */
  private settleLater(keyId: string, queue: KeyQueue): void {
    // Unref'd: a cloud that exits leaves the holds to refuse early until HOLD_TTL_MS, never to overspend.
    queue.settleTimer ??= setTimeout(() => {
      queue.settleTimer = null;
      this.schedule(keyId, queue);
    }, SETTLE_DELAY_MS).unref();
  }

  /** Writes the settlements still queued (a cloud that stops returns its holds). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(
      [...this.queues].map(([keyId, queue]) => {
        if (queue.settlements.length === 0) return undefined;
        return new Promise<void>((resolve) => {
          queue.settlements.push({ admission: NO_ADMISSION, tokens: 0, done: resolve });
          this.schedule(keyId, queue);
        });
      }),
    );
  }

  private queue(keyId: string): KeyQueue {
    let queue = this.queues.get(keyId);
    if (!queue) this.queues.set(keyId, (queue = { waiting: [], settlements: [], running: false, scheduled: false, settleTimer: null }));
    return queue;
  }

  /** Runs the key's next batch once the requests arriving in this turn of the event loop have joined it. */
  private schedule(keyId: string, queue: KeyQueue): void {
    if (queue.running || queue.scheduled) return;
    queue.scheduled = true;
    setImmediate(() => {
      queue.scheduled = false;
      void this.runBatch(keyId, queue);
    });
  }

  private async runBatch(keyId: string, queue: KeyQueue): Promise<void> {
    const waiting = queue.waiting;
    const settlements = queue.settlements;
    queue.waiting = [];
    queue.settlements = [];
    if (queue.settleTimer) clearTimeout(queue.settleTimer);
    queue.settleTimer = null;
    queue.running = true;
    let outcomes: (Admission | EdgeError)[] = [];
    try {
      outcomes = await this.ctx.db.transaction().execute(async (trx) => {
        const row = await (this.ctx.dialect === "postgres"
          ? trx.selectFrom("deployment_key_meters").selectAll().where("key_id", "=", keyId).forUpdate()
          : trx.selectFrom("deployment_key_meters").selectAll().where("key_id", "=", keyId)
        ).executeTakeFirst();
        if (!row) return waiting.map(() => new EdgeError(401, "invalid_api_key", "this API key no longer exists"));
        const meter = meterOf(row);
        for (const s of settlements) applySettlement(meter, s.admission, s.tokens);
        // Read the clock with the row locked: no admission written after this moment was counted yet.
        const now = this.now();
        const decided = waiting.map((w) => decide(meter, w.key, w.reserve, now));
        await trx.updateTable("deployment_key_meters").set(meter).where("key_id", "=", keyId).execute();
        return decided;
      });
    } catch (err) {
      for (const w of waiting) w.reject(err);
      // Best effort, as the holds they return: retried with the next batch, refusing early until
      // then; a closing meter's store may be gone, so it gives them up.
      if (this.closed) for (const s of settlements) s.done();
      else queue.settlements.unshift(...settlements);
      outcomes = [];
    } finally {
      queue.running = false;
    }
    outcomes.forEach((outcome, i) => (outcome instanceof EdgeError ? waiting[i].reject(outcome) : waiting[i].resolve(outcome)));
    if (outcomes.length > 0) for (const s of settlements) s.done();
    if (queue.waiting.length > 0) this.schedule(keyId, queue);
    else if (queue.settlements.length > 0) this.settleLater(keyId, queue);
    else this.queues.delete(keyId);
  }
}

/** A settlement that returns nothing (close() uses it to write the others). */
const NO_ADMISSION: Admission = { windowStart: -1, holdEpoch: -1, periodStart: "\u0000", reserved: 0, headers: {} };

function meterOf(row: { [K in keyof Meter]: number | string | bigint }): Meter {
  return {
    hold_epoch: Number(row.hold_epoch),
    window_start: Number(row.window_start),
    window_requests: Number(row.window_requests),
    window_tokens: Number(row.window_tokens),
    period_start: String(row.period_start),
    period_tokens: Number(row.period_tokens),
    reserved_tokens: Number(row.reserved_tokens),
    held_until: Number(row.held_until),
  };
}

/** A request that ended: its hold returns (unless its epoch of holds was dropped) and its real tokens count where it was admitted. */
function applySettlement(meter: Meter, admission: Admission, tokens: number): void {
  if (meter.hold_epoch === admission.holdEpoch) meter.reserved_tokens -= admission.reserved;
  if (meter.period_start === admission.periodStart) meter.period_tokens += tokens;
  if (meter.window_start === admission.windowStart) meter.window_tokens += tokens;
}

/** Admits one request against `meter` (changing it), or answers the 429 that says which rule refused it. */
function decide(meter: Meter, key: KeyRulesState, reserve: number, now: number): Admission | EdgeError {
  const period = key.budget ? budgetPeriodStart(key.budget.period, now) : "";
  const hold = key.budget ? reserve : 0;
  const windowEnded = meter.window_start <= now - MINUTE_MS;
  const holdsStale = meter.held_until < now;
  const liveHolds = holdsStale ? 0 : meter.reserved_tokens;
  const spent = meter.period_start === period ? meter.period_tokens : 0;
  const admitted =
    (key.requestsPerMinute === null || windowEnded || meter.window_requests < key.requestsPerMinute) &&
    (key.tokensPerMinute === null || windowEnded || meter.window_tokens < key.tokensPerMinute) &&
    (!key.budget || spent + liveHolds < key.budget.tokens);
  if (!admitted) return refusal(key, meter, now, period);
  if (windowEnded) {
    meter.window_start = now;
    meter.window_requests = 1;
    meter.window_tokens = 0;
  } else meter.window_requests += 1;
  meter.period_tokens = spent;
  meter.period_start = period;
  if (hold > 0) {
    meter.reserved_tokens = liveHolds + hold;
    if (holdsStale) meter.hold_epoch += 1;
    meter.held_until = now + HOLD_TTL_MS;
  }
  return { windowStart: meter.window_start, holdEpoch: meter.hold_epoch, periodStart: period, reserved: hold, headers: rateLimitHeaders(key, meter, now) };
}

/** Why the key was refused: the first rule reached. */
function refusal(key: KeyRulesState, row: Meter, now: number, period: string): EdgeError {
  const headers = rateLimitHeaders(key, row, now);
  const windowOpen = row.window_start > now - MINUTE_MS;
  // Another instance's clock may run a little ahead: a window never lasts more than a minute.
  const windowResetMs = windowOpen ? Math.min(MINUTE_MS, row.window_start + MINUTE_MS - now) : 0;
  if (key.budget) {
    const spent = row.period_start === period ? row.period_tokens : 0;
    if (spent >= key.budget.tokens) {
      const reset = budgetResetMs(key.budget.period, now);
      const when = reset === null ? "it does not renew" : `it renews in ${formatResetDuration(reset)}`;
      return new EdgeError(
        429,
        "insufficient_quota",
        `You exceeded your current quota: this key's budget of ${key.budget.tokens} tokens per ${key.budget.period === "total" ? "key" : key.budget.period} is spent (${when}).`,
        null,
        reset === null ? undefined : Math.ceil(reset / 1000),
        "insufficient_quota",
        headers,
      );
    }
  }
  if (windowOpen && key.requestsPerMinute !== null && row.window_requests >= key.requestsPerMinute) {
    return rateLimited("requests", `requests per min (RPM): Limit ${key.requestsPerMinute}, Used ${row.window_requests}, Requested 1`, windowResetMs, headers);
  }
  if (windowOpen && key.tokensPerMinute !== null && row.window_tokens >= key.tokensPerMinute) {
    return rateLimited("tokens", `tokens per min (TPM): Limit ${key.tokensPerMinute}, Used ${row.window_tokens}`, windowResetMs, headers);
  }
  // The budget is held by requests in flight: it may free up when they end.
  return rateLimited("tokens", `tokens held by requests in flight: Budget ${key.budget?.tokens ?? 0}, Held ${row.reserved_tokens}`, 1000, headers);
}

function rateLimited(type: "requests" | "tokens", what: string, resetMs: number, headers: Record<string, string>): EdgeError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new EdgeError(
    429,
    "rate_limit_exceeded",
    `Rate limit reached for this key on ${what}. Please try again in ${formatResetDuration(resetMs)}.`,
    null,
    seconds,
    type,
    headers,
  );
}

/** OpenAI's x-ratelimit-* headers for the limits the key has. */
function rateLimitHeaders(key: KeyRulesState, row: Meter, now: number): Record<string, string> {
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
