/**
 * What the Playground says about each reply it streamed: the time to its first token, and its
 * speed in tokens per second. Times are the page's clock (`performance.now()`, ms), so they include the
 * studio and the cloud as a user of the endpoint would see them; the token count is the server's.
 */

export interface ReplyTiming {
  /** When the request left. */
  sentAt: number;
  /** When the first piece of text arrived; undefined until then. */
  firstTokenAt?: number;
  /** When the answer ended; undefined while it streams. */
  endedAt?: number;
  /** The server's count of the reply's tokens (its `usage`); undefined when it sent none. */
  completionTokens?: number;
}

export interface ReplyStats {
  /** Time to first token, ms; null before it came. */
  timeToFirstTokenMs: number | null;
  /**
   * The decoding speed: the tokens after the first over the time from the first token to the end, so the wait
   * before it (a cold model's load) is not counted in (that is the time to first token). Over the whole time when
   * the reply took under MEASURABLE_MS after its first token: the cloud sends text in pieces of several tokens (at
   * most one write per 8 ms), so such a reply's tokens arrive in one or two pieces and a rate over that alone
   * would read as thousands per second. Null while streaming, or without a token count.
   */
  tokensPerSecond: number | null;
  tokens: number | null;
  /** Whole request, ms; null while streaming. */
  totalMs: number | null;
}

/** Shortest time after the first token over which a decoding rate means something (several pieces of text). */
const MEASURABLE_MS = 100;

export function replyStats(timing: ReplyTiming): ReplyStats {
  const { sentAt, firstTokenAt, endedAt, completionTokens } = timing;
  const tokens = completionTokens ?? null;
  let tokensPerSecond: number | null = null;
  if (endedAt !== undefined && tokens !== null && tokens > 0 && endedAt > sentAt) {
    const decodingMs = firstTokenAt !== undefined ? endedAt - firstTokenAt : 0;
    tokensPerSecond = tokens > 1 && decodingMs >= MEASURABLE_MS ? (tokens - 1) / (decodingMs / 1000) : tokens / ((endedAt - sentAt) / 1000);
  }
  return {
    timeToFirstTokenMs: firstTokenAt !== undefined ? Math.max(0, firstTokenAt - sentAt) : null,
    tokensPerSecond,
    tokens,
    totalMs: endedAt !== undefined ? Math.max(0, endedAt - sentAt) : null,
  };
}

/** `first token 120 ms · 35.2 tokens/s · 48 tokens`, leaving out what is not known yet. */
export function replyStatsText(stats: ReplyStats): string {
  const parts: string[] = [];
  if (stats.timeToFirstTokenMs !== null) parts.push(`first token ${formatMs(stats.timeToFirstTokenMs)}`);
  if (stats.tokensPerSecond !== null)
    parts.push(`${stats.tokensPerSecond >= 100 ? Math.round(stats.tokensPerSecond) : stats.tokensPerSecond.toFixed(1)} tokens/s`);
  if (stats.tokens !== null) parts.push(`${stats.tokens} token${stats.tokens === 1 ? "" : "s"}`);
  return parts.join(" · ");
}

/** `85 ms`, `1.24 s`. */
export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}
