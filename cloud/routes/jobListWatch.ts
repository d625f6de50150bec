/**
 * `GET /v1/jobs/watch?projectId=`: the project's job-list ETag as an event stream, at once and
 * after every change (sdk/api/jobs.ts `jobListWatchRoute`). The studio keeps the list it relays
 * and, while this stream says its ETag is current, answers `/api/jobs` without asking (the
 * revalidation round trip would be the studio's whole cost over the cloud's).
 *
 * A change made here carries its version and is written to the socket at once (not at the end of
 * the tick, where Node would otherwise send it), before the request that made it is answered
 * (domain/jobListChanges.ts); a change made by another instance is only a signal to read the
 * version again. Versions only grow: one announced out of commit order, or
 * read back older than one already sent, is not sent.
 */
import type { FastifyInstance } from "fastify";
import { jobListWatchRoute, type JobListVersion } from "../../sdk/api/jobs.js";
import { serveRoute } from "../../server-shared/serveRoute.js";
import type { CloudContext } from "../context.js";
import { jobListEtag, jobListVersion } from "../domain/jobListVersion.js";
import { openSse } from "../http/sse.js";
import { requiredProjectScope } from "./scope.js";

export function jobListWatchRoutes(app: FastifyInstance, ctx: CloudContext): void {
  serveRoute(app, jobListWatchRoute, async (request, reply) => {
    const projectId = await requiredProjectScope(ctx, request, request.query.projectId);
    const sse = openSse(request, reply);
    ctx.openStreams.add(sse);
    ctx.metrics.sseClients.inc({ kind: "job_list" });
    let sent = -1;
    const announce = (version: number) => {
      if (version <= sent) return;
      sent = version;
      const data: JobListVersion = { etag: jobListEtag(projectId, version), immediate: ctx.jobListChanges.immediate };
      sse.send({ event: "version", data });
      sse.flush();
    };
    const readAndAnnounce = () =>
      jobListVersion(ctx, projectId).then(announce, (err) => {
        request.log.error({ err }, "job list watch failed");
        sse.close();
      });
    // Subscribed before the first read: a change committed meanwhile is announced, not lost.
    const unsubscribe = ctx.jobListChanges.subscribe(projectId, (version) => (version === undefined ? void readAndAnnounce() : announce(version)));
    void sse.closed.then(unsubscribe);
    await readAndAnnounce();
  });
}
