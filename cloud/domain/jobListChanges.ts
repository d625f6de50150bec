/**
 * Tells watchers of a project's job list (`GET /v1/jobs/watch`) each new version of it, so a relay
 * that keeps the list (the studio) learns of a change without asking on every request.
 *
 * On one instance (SQLite) the version comes from the committed transaction itself and goes out
 * synchronously, before the request that made the change is answered: whoever learns of a change
 * from that answer, and then asks a relay on the same machine, asks after the relay was told.
 * With several instances (PostgreSQL) another instance's change arrives as a cluster signal,
 * later; the watch then says it is not immediate, and relays keep asking (routes/jobListWatch.ts).
 * Listeners get the new version for a change made here, nothing for another instance's (read the
 * store).
 */
import type { ClusterSignals } from "../store/clusterSignals.js";
import { KeyedWakeups } from "./keyedWakeups.js";

export class JobListChanges extends KeyedWakeups<number> {
  constructor(cluster?: ClusterSignals) {
    super(cluster, "joblist", "projects");
  }

  /** Call right after the commit that raised these versions (bumpJobListVersions), before answering. */
  changed(versions: ReadonlyMap<string, number>): void {
    if (versions.size === 0) return;
    for (const [projectId, version] of versions) this.wakeLocal(projectId, version);
    if (this.cluster?.shared) void this.cluster.signalList("joblist", "projects", [...versions.keys()]);
  }

  /** True when every change reaches watchers before its request is answered (no other instance writes). */
  get immediate(): boolean {
    return !this.cluster?.shared;
  }
}
