// Waiting without guessing: tests never sleep a fixed time and hope; they re-check a condition
// until it holds or a deadline passes, and then fail with a message that says what was awaited.

export interface PollOptions {
  /** Give up after this long. */
  timeoutMs: number;
  /** Pause between two checks; small, it only bounds CPU use. */
  intervalMs?: number;
  /** What is awaited, for the timeout message ("code-server /healthz"). */
  description: string;
  /**
   * Checked before every attempt; a returned string aborts the wait at once with that reason
   * (for example "process exited with code 1"), instead of waiting out the deadline.
   */
  abortIf?: () => string | undefined;
}

/** Calls `check` until it returns something other than undefined/false, and returns that. */
export async function pollUntil<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs, intervalMs = 50, description, abortIf }: PollOptions,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const abortReason = abortIf?.();
    if (abortReason !== undefined) throw new Error(`gave up waiting for ${description}: ${abortReason}`);
    try {
      const result = await check();
      if (result !== undefined && result !== false) return result;
    } catch (err) {
      lastError = err; // e.g. ECONNREFUSED while a server is still starting
    }
    if (Date.now() >= deadline) {
      const detail = lastError instanceof Error ? ` (last error: ${lastError.message})` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${description}${detail}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Rejects with a clear message when `promise` has not settled within `timeoutMs`. */
export async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, description: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms: ${description}`)), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
