/**
 * Fan-out of freshly appended job events to live SSE subscribers, on this instance and (through
 * the cluster signals, on PostgreSQL) on every other instance. The database is the source of
 * truth; the bus only wakes subscribers, which always read what they missed from the store, so a
 * lost wake-up costs latency, never an event. A subscriber gets the event when it was stored by
 * this instance, nothing when it is a wake-up from another one (read the store either way).
 */
import type { JobEvent } from "../../sdk/wire.js";
import type { ClusterSignals } from "../store/clusterSignals.js";
import { KeyedWakeups } from "./keyedWakeups.js";

export class JobEventBus extends KeyedWakeups<JobEvent> {
  /** Jobs with events appended this turn, signalled to the other instances together. */
  private pending = new Set<string>();

  constructor(cluster?: ClusterSignals) {
    super(cluster, "events", "jobs");
  }

  /** Call after the commit that stored `event` of `jobId`. */
  publish(jobId: string, event: JobEvent): void {
    this.wakeLocal(jobId, event);
    if (!this.cluster?.shared) return;
    if (this.pending.size === 0) setImmediate(() => this.signalPending());
    this.pending.add(jobId);
  }

  private signalPending(): void {
    const jobs = [...this.pending];
    this.pending = new Set();
    void this.cluster?.signalList("events", "jobs", jobs);
  }
}
