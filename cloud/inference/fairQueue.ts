/**
 * Admission for the local engine: at most `concurrency` generations run at once, and waiting
 * requests are served round-robin across keys (one key per deployment or project), so one busy
 * caller cannot starve the others. Beyond `maxWaiting` waiting requests, new ones are refused
 * at once with a 429 carrying a Retry-After estimate.
 */
import type { CancelSignal } from "./clientGone.js";
import { InferenceError } from "./types.js";

interface Waiter {
  admit: () => void;
  reject: (err: unknown) => void;
}

export class FairQueue {
  private running = 0;
  private waiting = 0;
  /** Insertion order of this map is the round-robin order of keys. */
  private readonly queues = new Map<string, Waiter[]>();
  /** Moving average of how long one generation holds its slot, for Retry-After. */
  private averageMs = 1000;

  constructor(
    private readonly concurrency: number,
    private readonly maxWaiting: number,
  ) {}

  /** Resolves with a release function once a slot is free; throws 429 when the queue is full. */
  async acquire(key: string, signal?: CancelSignal): Promise<() => void> {
    if (this.running < this.concurrency && this.waiting === 0) return this.grant();
    if (this.waiting >= this.maxWaiting) {
      const seconds = Math.max(1, Math.ceil(((this.waiting + 1) * this.averageMs) / this.concurrency / 1000));
      throw new InferenceError(429, "rate_limit_exceeded", `the model is busy (${this.waiting} requests waiting); retry in ${seconds} s`, {
        retryAfter: seconds,
      });
    }
    return new Promise<() => void>((resolve, reject) => {
      const waiter: Waiter = {
        admit: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.grant());
        },
        reject,
      };
      const onAbort = () => {
        const list = this.queues.get(key);
        const at = list?.indexOf(waiter) ?? -1;
        if (list && at >= 0) {
          list.splice(at, 1);
          if (list.length === 0) this.queues.delete(key);
          this.waiting -= 1;
        }
        reject(new InferenceError(499, "client_closed", "the client went away while waiting"));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const list = this.queues.get(key);
      if (list) list.push(waiter);
      else this.queues.set(key, [waiter]);
      this.waiting += 1;
    });
  }

  get stats(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting };
  }

  private grant(): () => void {
    this.running += 1;
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running -= 1;
      this.averageMs = this.averageMs * 0.8 + (performance.now() - started) * 0.2;
      this.admitNext();
    };
  }

  private admitNext(): void {
    while (this.running < this.concurrency && this.waiting > 0) {
      const [key, list] = this.queues.entries().next().value as [string, Waiter[]];
      const waiter = list.shift()!;
      this.queues.delete(key);
      // The key goes to the back of the rotation if it still has waiters.
      if (list.length > 0) this.queues.set(key, list);
      this.waiting -= 1;
      waiter.admit();
    }
  }
}
