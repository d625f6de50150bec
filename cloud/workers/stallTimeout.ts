/**
 * A deadline for transfers that may legitimately take hours (a multi-GB base model, a large adapter) but must not
 * hang forever on a dead peer: the signal aborts when no bytes have moved for `idleMs`, however long the whole
 * transfer runs. Wrap each stream the transfer reads from or writes to with `through()`.
 */
import { Transform } from "node:stream";

export interface StallTimeout {
  signal: AbortSignal;
  /** A pass-through stream that counts as progress each time bytes go through it. */
  through(): Transform;
  /** Stops the timer (the transfer finished or failed on its own). */
  done(): void;
}

export function stallTimeout(idleMs: number, what: string): StallTimeout {
  const controller = new AbortController();
  let timer: NodeJS.Timeout;
  let finished = false;
  const arm = () => {
    clearTimeout(timer);
    // Bytes can still pass through after done() (a body the peer stopped reading when it answered
    // early): a timer armed then would keep the process alive for idleMs after the transfer ended.
    if (finished) return;
    timer = setTimeout(
      () => controller.abort(new Error(`${what} stalled: no data for ${idleMs >= 1000 ? `${Math.round(idleMs / 1000)} s` : `${idleMs} ms`}`)),
      idleMs,
    );
  };
  arm();
  return {
    signal: controller.signal,
    through: () =>
      new Transform({
        transform(chunk, _encoding, callback) {
          arm();
          callback(null, chunk);
        },
      }),
    done: () => {
      finished = true;
      clearTimeout(timer);
    },
  };
}

/** How long a worker's transfer may sit without progress: SVC_WORKER_STALL_MS, default 60 s. */
export function workerStallMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.SVC_WORKER_STALL_MS);
  return Number.isFinite(value) && value > 0 ? value : 60_000;
}
