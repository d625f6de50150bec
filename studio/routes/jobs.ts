/**
 * Jobs: the full list (no pagination, SPEC section 8), one job, cancel, artifacts, adapter downloads,
 * and the event stream relayed from the cloud with resume.
 */
import type { StudioContext, StudioHandlers } from "../context.js";
import { StudioError } from "../errors.js";
import { sendMergedModel } from "../mergedExport.js";
import { lastEventIdOf, relayFile, relayStream } from "../relay.js";
import { answerRetryLater, isTransientUpstreamError } from "../streamRetry.js";

export function jobHandlers(
  ctx: StudioContext,
): Pick<
  StudioHandlers,
  | "listJobs"
  | "getJob"
  | "cancelJob"
  | "deleteJob"
  | "listArtifacts"
  | "listJobSamples"
  | "jobEvents"
  | "downloadAdapter"
  | "downloadMergedModel"
  | "getExportProgress"
> {
  const { sessions, jobList } = ctx;
  return {
    /**
     * Like deployments: no `.svc/state.json` means no project yet, so no jobs and no upstream call.
     * Otherwise the cloud's bytes are relayed unchanged (its full list in its order): parsing and
     * re-serialising megabytes of jobs cost more than the cloud took to answer.
     */
    listJobs: async (_request, reply) => {
      const client = await sessions.existingProjectClient();
      if (!client) return [];
      const list = await jobList.fetch(client);
      return reply.type(list.contentType).send(list.body);
    },
    getJob: async ({ params }) => (await sessions.clientFor()).getJob(params.id),
    cancelJob: async ({ params }) => (await sessions.clientFor()).cancelJob(params.id),
    deleteJob: async ({ params }) => (await sessions.clientFor()).deleteJob(params.id),
    listArtifacts: async ({ params }) => (await sessions.clientFor()).listArtifacts(params.id),
    listJobSamples: async ({ params }) => (await sessions.clientFor()).listJobSamples(params.id),
    /** The adapter's bytes as the cloud sends them (its 404s and 400s keep their status and message). */
    downloadAdapter: async ({ params, query }, reply) => {
      const abort = new AbortController();
      const upstream = await (await sessions.clientFor()).openJobAdapter(params.id, { format: query.format, step: query.step }, abort.signal);
      await relayFile(reply.request, reply, upstream, abort);
    },
    /** The base with the adapter merged in, or an Ollama or LM Studio export, made by `svc export` in a child (studio/mergedExport.ts). */
    downloadMergedModel: async ({ params, query }, reply) => sendMergedModel(ctx, params.id, query, reply),
    getExportProgress: async ({ params }) => {
      const progress = ctx.exports.get(params.id);
      if (!progress) throw new StudioError(404, "not_found", `no export ${params.id} in progress`);
      return progress;
    },
    jobEvents: async (request, reply) => {
      const abort = new AbortController();
      let upstream: Response;
      try {
        const client = await sessions.clientFor();
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
    },
  };
}
