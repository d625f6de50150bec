/**
 * Tells watchers of a project's job list (`GET /v1/jobs/watch`) each new version of it, so a relay
 * that keeps the list (the studio) learns of a change without asking on every request.
 *
 * On one instance (SQLite) the version comes from the committed transaction itself and goes out
 * synchronously, before the request that made the change is answered: whoever learns of a change
 * from that answer, and then asks a relay on the same machine, asks after the relay was told.
 * With several instances (PostgreSQL) another instance's change arrives as a cluster signal,
 * later; the watch then says it is not immediate, and relays keep asking (routes/jobListWatch.ts).
 */
import { EventEmitter } from "node:events";
import type { ClusterSignals } from "../store/clusterSignals.js";

/** `version` is the list's new version when this instance made the change; absent for another instance's (read the store). */
export type JobListListener = (version?: number) => void;

export class JobListChanges {
  private readonly emitter = new EventEmitter();

  constructor(private readonly cluster?: ClusterSignals) {
    // One listener per open watch; many watchers of one project are legitimate.
    this.emitter.setMaxListeners(0);
    cluster?.on("joblist", (message) => {
      for (const projectId of Array.isArray(message.projects) ? message.projects : []) this.emitter.emit(String(projectId));
    });
    // Signals may have been missed while the listener was away: every watcher looks again.
    cluster?.onResync(() => {
      for (const projectId of this.emitter.eventNames()) this.emitter.emit(projectId);
    });
  }

  /** Call right after the commit that raised these versions (bumpJobListVersions), before answering. */
  changed(versions: ReadonlyMap<string, number>): void {
    if (versions.size === 0) return;
    for (const [projectId, version] of versions) this.emitter.emit(projectId, version);
    if (this.cluster?.shared) void this.cluster.signalList("joblist", "projects", [...versions.keys()]);
  }

  /** True when every change reaches watchers before its request is answered (no other instance writes). */
  get immediate(): boolean {
    return !this.cluster?.shared;
  }

  /** Returns the unsubscribe function. */
  subscribe(projectId: string, listener: JobListListener): () => void {
    this.emitter.on(projectId, listener);
    return () => this.emitter.off(projectId, listener);
  }
}
