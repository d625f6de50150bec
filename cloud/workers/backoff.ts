/**
 * Reconnect delays for the worker link: exponential from 200 ms up to 10 s, with full jitter
 * (a random delay between half and all of the step), so workers that lost the same cloud do not
 * all knock again at the same instant when it comes back.
 */
const FIRST_DELAY_MS = 200;
const MAX_DELAY_MS = 10_000;

export function reconnectDelayMs(attempt: number, random: () => number = Math.random): number {
  const step = Math.min(FIRST_DELAY_MS * 2 ** Math.min(attempt, 16), MAX_DELAY_MS);
  return Math.round(step / 2 + random() * (step / 2));
}
