/**
 * Listeners per key (a job, a project) woken on this instance and, through the cluster signals
 * (PostgreSQL), on every other one. A wake-up from this instance may carry a value (the event, the
 * version it stored); one from another instance carries none, and after the listening connection
 * came back every listener is woken, as signals may have been missed: listeners then read the
 * store, which stays the truth. Base of the job event bus and the job-list changes.
 */
import { EventEmitter } from "node:events";
import type { ClusterSignals, ClusterTopic } from "../store/clusterSignals.js";

export class KeyedWakeups<T> {
  private readonly emitter = new EventEmitter();

  /** `topic` signals carry their keys as a list under `listKey` (ClusterSignals.signalList). */
  constructor(
    protected readonly cluster: ClusterSignals | undefined,
    topic: ClusterTopic,
    listKey: string,
  ) {
    // One listener per open stream; thousands on one key are legitimate.
    this.emitter.setMaxListeners(0);
    cluster?.on(topic, (message) => {
      const keys = message[listKey];
      for (const key of Array.isArray(keys) ? keys : []) this.emitter.emit(String(key));
    });
    cluster?.onResync(() => {
      for (const key of this.emitter.eventNames()) this.emitter.emit(key);
    });
  }

  /** Returns the unsubscribe function. */
  subscribe(key: string, listener: (value?: T) => void): () => void {
    this.emitter.on(key, listener);
    return () => this.emitter.off(key, listener);
  }

  /** Wakes this instance's listeners of `key` with `value`. */
  protected wakeLocal(key: string, value: T): void {
    this.emitter.emit(key, value);
  }
}
