/**
 * In-process fan-out of freshly appended job events to live SSE subscribers. The database is the
 * source of truth; the bus only wakes subscribers, which always read what they missed from the
 * store, so a lost wake-up costs latency, never an event.
 */
import { EventEmitter } from "node:events";
import type { JobEvent } from "../../sdk/wire.js";

export class JobEventBus {
  private readonly emitter = new EventEmitter();

  constructor() {
    // One listener per open SSE stream; thousands of watchers of one job are legitimate.
    this.emitter.setMaxListeners(0);
  }

  publish(jobId: string, event: JobEvent): void {
    this.emitter.emit(jobId, event);
  }

  /** Returns the unsubscribe function. */
  subscribe(jobId: string, listener: (event: JobEvent) => void): () => void {
    this.emitter.on(jobId, listener);
    return () => this.emitter.off(jobId, listener);
  }
}
