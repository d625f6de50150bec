/**
 * `GET /v1/jobs` from memory: the full list (no pagination) of a project with thousands of jobs
 * is megabytes, and reading every row from the store per request cost tens of milliseconds. The
 * serialised body is kept per project beside the project's job-list version (a row raised in the
 * same transaction as every change a `Job` shows: creation, status change); a request reads that
 * one row and sends the kept bytes while the version is unchanged. The version lives in the
 * store, so a change made by another cloud instance sharing PostgreSQL is seen too.
 */
import type { CloudContext } from "../context.js";
import { listJobs } from "./jobs.js";
import { jobListVersion } from "./jobListVersion.js";

/** Bytes kept over all projects; the least recently used lists go first. */
const MAX_BYTES = 64 * 1024 * 1024;

export class JobListCache {
  private readonly entries = new Map<string, { version: number; body: Buffer }>();
  private bytes = 0;

  /**
   * The project's job list as JSON bytes, newest job first, and the version it is at least as new
   * as (an entity tag for it: a later change always raises the version past it).
   */
  async body(ctx: CloudContext, projectId: string): Promise<{ version: number; body: Buffer }> {
    // The version is read before the rows: a list built from rows read afterwards is at least as
    // new as the version it is kept under, never older (at worst it is rebuilt once more).
    const version = await jobListVersion(ctx, projectId);
    const kept = this.entries.get(projectId);
    if (kept && kept.version === version) {
      this.entries.delete(projectId); // re-insert: Map order is the recency order
      this.entries.set(projectId, kept);
      return kept;
    }
    const body = Buffer.from(JSON.stringify(await listJobs(ctx, projectId)));
    this.forget(projectId);
    const entry = { version, body };
    this.entries.set(projectId, entry);
    this.bytes += body.byteLength;
    for (const [oldest] of this.entries) {
      if (this.bytes <= MAX_BYTES || oldest === projectId) break;
      this.forget(oldest);
    }
    return entry;
  }

  private forget(projectId: string): void {
    const kept = this.entries.get(projectId);
    if (!kept) return;
    this.bytes -= kept.body.byteLength;
    this.entries.delete(projectId);
  }
}
