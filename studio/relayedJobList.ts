/**
 * The cloud's job list, relayed unchanged and kept between requests: the full list (no
 * pagination) is megabytes for thousands of jobs, and fetching it again on every `/api/jobs`
 * doubled the cost of the cloud's own answer. Every request still asks the cloud, with the kept
 * list's ETag: an unchanged list answers 304 with no body and the kept bytes are sent; a changed
 * one comes whole and replaces them. So the answer is always the cloud's current list.
 */
import type { CloudClient } from "../sdk/client.js";

interface KeptList {
  projectId: string;
  etag: string;
  contentType: string;
  body: Buffer;
}

export class RelayedJobList {
  /** One project's list: a studio serves one project folder. */
  private kept: KeptList | null = null;

  async fetch(client: CloudClient): Promise<{ contentType: string; body: Buffer }> {
    const projectId = client.projectId ?? "";
    const kept = this.kept?.projectId === projectId ? this.kept : null;
    const upstream = await client.openJobList(kept?.etag);
    if (upstream.status === 304 && kept) return kept;
    const body = Buffer.from(await upstream.arrayBuffer());
    const contentType = upstream.headers.get("content-type") ?? "application/json; charset=utf-8";
    const etag = upstream.headers.get("etag");
    this.kept = etag ? { projectId, etag, contentType, body } : null;
    return { contentType, body };
  }
}
