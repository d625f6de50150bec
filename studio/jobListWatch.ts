/**
 * The studio's watch on the cloud's job list (`GET /v1/jobs/watch`, cloud/routes/jobListWatch.ts):
 * an event stream that announces the list's ETag at once and after every change. While it is open
 * and its last ETag is the one of the list the studio keeps, `/api/jobs` answers from that list
 * without asking the cloud (relayedJobList.ts); the round trip it saves would be the studio's
 * whole cost over the cloud's own answer.
 *
 * That answer is exact, not merely recent, only where the announcement of a change reaches this
 * process before anyone who could ask us can know of the change. So the watch is trusted only
 * - for a cloud on this machine (loopback): the cloud writes the announcement into our socket
 *   before it answers the request that made the change, and the kernel hands it to us first;
 *   this process then reads it in one synchronous pass (node:http, no stream hops), before any
 *   request that arrives later;
 * - when the cloud says its announcements are immediate (one instance; with several sharing
 *   PostgreSQL, another instance's change reaches this one later);
 * - while the stream is open: when it ends, the next requests ask the cloud again until a new
 *   stream has announced the current ETag.
 * Anywhere else every request revalidates, as it did before the watch.
 */
import http from "node:http";
import https from "node:https";
import { jobListWatchRoute, type JobListVersion } from "../sdk/api/jobs.js";
import { SseParser } from "../sdk/sseParser.js";
import { LOOPBACK_NAMES } from "./guard.js";

/** Reconnection delays after a failed or ended stream, growing to the last. */
const RETRY_DELAYS_MS = [100, 250, 500, 1000, 2000, 5000];

export interface WatchTarget {
  baseUrl: string;
  projectId: string;
  headers: Record<string, string>;
}

export class JobListWatch {
  /** What the open (or opening) stream watches: cloud, project and credentials. */
  private key: string | null = null;
  /** The ETag last announced on the open stream, when the announcements can be trusted. */
  private etag: string | null = null;
  private request: http.ClientRequest | null = null;
  private retry: NodeJS.Timeout | null = null;
  private failures = 0;
  private closed = false;

  /** The current ETag of the list watched under `key`, when known exactly; else null (ask the cloud). */
  currentEtag(key: string): string | null {
    return key === this.key ? this.etag : null;
  }

  /** Keeps a stream open for `key`, replacing one for another cloud, project or token. */
  follow(key: string, target: WatchTarget): void {
    if (this.closed || key === this.key) return;
    this.stop();
    this.key = key;
    if (LOOPBACK_NAMES.has(new URL(target.baseUrl).hostname)) this.open(key, target);
  }

  close(): void {
    this.closed = true;
    this.stop();
  }

  private stop(): void {
    this.key = null;
    this.etag = null;
    this.failures = 0;
    if (this.retry) clearTimeout(this.retry);
    this.retry = null;
    this.request?.destroy();
    this.request = null;
  }

  private open(key: string, target: WatchTarget): void {
    const url = new URL(jobListWatchRoute.path, target.baseUrl);
    url.searchParams.set("projectId", target.projectId);
    const request = (url.protocol === "https:" ? https.request : http.request)(url, { headers: { ...target.headers, accept: "text/event-stream" } });
    this.request = request;
    const ended = () => {
      if (this.request !== request) return; // replaced or closed meanwhile
      this.etag = null;
      this.request = null;
      const delay = RETRY_DELAYS_MS[Math.min(this.failures++, RETRY_DELAYS_MS.length - 1)];
      this.retry = setTimeout(() => {
        this.retry = null;
        if (this.key === key) this.open(key, target);
      }, delay);
      this.retry.unref();
    };
    request.on("response", (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        // A refusal (an older cloud without the route, a project or token it does not accept) is
        // not retried for this key: every request then revalidates, as without a watch.
        if (res.statusCode && res.statusCode < 500) this.request = null;
        else res.on("end", ended);
        return;
      }
      const parser = new SseParser();
      res.setEncoding("utf8");
      res.on("data", (text: string) => {
        if (this.request !== request) return;
        for (const message of parser.feed(text)) {
          if (message.event !== "version") continue;
          const version = JSON.parse(message.data) as JobListVersion;
          this.etag = version.immediate ? version.etag : null;
          this.failures = 0;
        }
      });
      res.on("close", ended);
    });
    request.on("error", ended);
    request.end();
  }
}
