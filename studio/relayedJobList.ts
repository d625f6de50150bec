/**
 * The cloud's job list, relayed unchanged and kept between requests: the full list (no
 * pagination) is megabytes for thousands of jobs, and fetching it again on every `/api/jobs`
 * doubled the cost of the cloud's own answer. The answer is always the cloud's current list:
 * - while the cloud's watch on the list (jobListWatch.ts) says the kept list's ETag is current,
 *   the kept bytes are sent without asking;
 * - otherwise the cloud is asked with the kept list's ETag: an unchanged list answers 304 with
 *   no body and the kept bytes are sent; a changed one comes whole and replaces them.
 * Either way a job created a moment ago (by the CLI, another studio, a worker's status change)
 * is in the answer.
 */
import type { CloudClient } from "../sdk/client.js";
import { JobListWatch } from "./jobListWatch.js";

interface KeptList {
  /** Cloud, project and credentials it was fetched with: another of any of them fetches afresh. */
  key: string;
  etag: string;
  contentType: string;
  body: Buffer;
}

export class RelayedJobList {
  /** One list: a studio serves one project folder. */
  private kept: KeptList | null = null;
  private readonly watch = new JobListWatch();

  async fetch(client: CloudClient): Promise<{ contentType: string; body: Buffer }> {
    const projectId = client.projectId ?? "";
    const headers = await client.authorization();
    const key = `${client.baseUrl}\n${projectId}\n${headers.authorization ?? ""}`;
    const kept = this.kept?.key === key ? this.kept : null;
    if (kept && this.watch.currentEtag(key) === kept.etag) return kept;
    const upstream = await client.openJobList(kept?.etag);
    this.watch.follow(key, { baseUrl: client.baseUrl, projectId, headers });
    if (upstream.status === 304 && kept) return kept;
    const body = Buffer.from(await upstream.arrayBuffer());
    const contentType = upstream.headers.get("content-type") ?? "application/json; charset=utf-8";
    const etag = upstream.headers.get("etag");
    this.kept = etag ? { key, etag, contentType, body } : null;
    return { contentType, body };
  }

  close(): void {
    this.watch.close();
  }
}
