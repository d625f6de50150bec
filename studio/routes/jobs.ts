/**
 * Jobs: the full list (no pagination, SPEC section 8), one job, cancel, artifacts, and the event
 * stream relayed from the cloud with resume.
 */
import type { FastifyInstance } from "fastify";
import type { StudioContext } from "../context.js";
import { EVENT_STREAM_ROUTE } from "../guard.js";
import { RelayedJobList } from "../relayedJobList.js";
import { lastEventIdOf, relayStream } from "../relay.js";
import { answerRetryLater, isTransientUpstreamError } from "../streamRetry.js";

type JobParams = { Params: { id: string } };

export function registerJobRoutes(app: FastifyInstance, ctx: StudioContext): void {
  const keptJobList = new RelayedJobList();

  /**
   * Like deployments: no `.svc/state.json` means no project yet, so no jobs and no upstream call.
   * Otherwise the cloud's bytes are relayed unchanged (its full list in its order): parsing and
   * re-serialising megabytes of jobs cost more than the cloud took to answer.
   */
  app.get("/api/jobs", async (_request, reply) => {
    const client = await ctx.sessions.existingProjectClient();
    if (!client) return [];
    const list = await keptJobList.fetch(client);
    return reply.type(list.contentType).send(list.body);
  });

  /** A client scoped to the project when there is one; jobs by id work without a scope too. */
  const clientFor = async () => {
    const session = await ctx.sessions.open();
    return session.client((await session.state())?.projectId);
  };

  app.get<JobParams>("/api/jobs/:id", async (request) => (await clientFor()).getJob(request.params.id));
  app.post<JobParams>("/api/jobs/:id/cancel", async (request) => (await clientFor()).cancelJob(request.params.id));
  app.get<JobParams>("/api/jobs/:id/artifacts", async (request) => (await clientFor()).listArtifacts(request.params.id));

  app.get<JobParams>("/api/jobs/:id/events", { config: EVENT_STREAM_ROUTE }, async (request, reply) => {
    const abort = new AbortController();
    let upstream: Response;
    try {
      const client = await clientFor();
      // `?batch=1` (the job page) is passed on: the cloud then sends backlogs as `batch` frames.
      const batch = (request.query as Record<string, unknown> | undefined)?.batch === "1";
      upstream = await client.openJobEventStream(request.params.id, lastEventIdOf(request), abort.signal, { batch });
    } catch (err) {
      // The cloud is down or restarting: keep the browser's EventSource retrying (streamRetry.ts).
      if (isTransientUpstreamError(err)) return answerRetryLater(reply, (err as Error).message);
      // Errors retrying cannot fix (404 unknown job, 401) keep their status and envelope.
      throw err;
    }
    await relayStream(request, reply, upstream, abort);
  });
}
