/**
 * Fan-out of freshly appended job events to live SSE subscribers, on this instance and (through
 * the cluster signals, on PostgreSQL) on every other instance. The database is the source of
 * truth; the bus only wakes subscribers, which always read what they missed from the store, so a
 * lost wake-up costs latency, never an event.
 */
import { EventEmitter } from "node:events";
import type { JobEvent } from "../../sdk/wire.js";
import type { ClusterSignals } from "../store/clusterSignals.js";

export class JobEventBus {
  private readonly emitter = new EventEmitter();
  /** Jobs with events appended this turn, signalled to the other instances together. */
  private pending = new Set<string>();

  constructor(private readonly cluster?: ClusterSignals) {
    // One listener per open SSE stream; thousands of watchers of one job are legitimate.
    this.emitter.setMaxListeners(0);
    cluster?.on("events", (message) => {
      for (const jobId of Array.isArray(message.jobs) ? message.jobs : []) this.emitter.emit(String(jobId));
    });
    // Signals may have been missed while the listener was away: every reader looks again.
    cluster?.onResync(() => {
      for (const jobId of this.emitter.eventNames()) this.emitter.emit(jobId);
    });
  }

  /** Call after the commit that stored `event` of `jobId`. */
  publish(jobId: string, event: JobEvent): void {
    this.emitter.emit(jobId, event);
    if (!this.cluster?.shared) return;
    if (this.pending.size === 0) setImmediate(() => this.signalPending());
    this.pending.add(jobId);
  }

  /**
   * Returns the unsubscribe function. The listener gets the event when it was stored by this
   * instance, nothing when it is a wake-up from another one (read the store either way).
   */
  subscribe(jobId: string, listener: (event?: JobEvent) => void): () => void {
    this.emitter.on(jobId, listener);
    return () => this.emitter.off(jobId, listener);
  }

  private signalPending(): void {
    const jobs = [...this.pending];
    this.pending = new Set();
    void this.cluster?.signalList("events", "jobs", jobs);
  }
}
