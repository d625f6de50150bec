/**
 * How a worker retries a transfer (an artifact upload, a dataset download): a failure that may pass (the link dropped, the cloud
 * restarting, its disk full: a 5xx, 408 or 429) is retried with exponential backoff and full
 * jitter, a bounded number of times; a refusal (any other 4xx: the job ended, the claim moved on,
 * the file is too large) is final and not retried. The cloud stores an artifact under (job, name),
 * replacing a partial or earlier copy, so sending the same file again is always safe.
 */
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 15_000;
/** Attempts in one round of retries; after that the caller decides (warn, or wait and try later). */
export const TRANSFER_ATTEMPTS = 5;

/** The cloud refused the transfer for good (a 4xx other than 408/429); `code` is its error code. */
export class TransferRefused extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export function transferDelayMs(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(FIRST_DELAY_MS * 2 ** Math.min(attempt, 16), MAX_DELAY_MS);
  return Math.round(step / 2 + random() * (step / 2));
}

/** Whether a failed HTTP answer is worth another try. */
export function isTransientStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/**
 * Runs `attempt` until it succeeds, it is refused (TransferRefused, rethrown at once) or
 * `attempts` tries have failed (the last error is rethrown). `onRetry` hears each failure before the wait.
 */
export async function withTransferRetries<T>(
  attempt: () => Promise<T>,
  options: { attempts?: number; onRetry?: (err: Error, delayMs: number, tried: number) => void; delay?: (ms: number) => Promise<void> } = {},
): Promise<T> {
  const attempts = options.attempts ?? TRANSFER_ATTEMPTS;
  const wait = options.delay ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let tried = 1; ; tried++) {
    try {
      return await attempt();
    } catch (err) {
      if (err instanceof TransferRefused || tried >= attempts) throw err;
      const delayMs = transferDelayMs(tried - 1);
      options.onRetry?.(err as Error, delayMs, tried);
      await wait(delayMs);
    }
  }
}
