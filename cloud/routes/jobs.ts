import type { FastifyInstance, FastifyRequest } from "fastify";
import { describeConfigProblems, jobConfigProblems } from "../../sdk/trainer/config.js";
import type { CloudContext } from "../context.js";
import { requireDataset } from "../domain/datasets.js";
import { cancelJob, createJob, requireJobInProject, toJob } from "../domain/jobs.js";
import { deleteJob, jobDiskBytes } from "../domain/jobDeletion.js";
import { JobListCache } from "../domain/jobListCache.js";
import { jobListEtag } from "../domain/jobListVersion.js";
import { listArtifacts } from "../domain/artifacts.js";
import { gradeJobSamples, listJobSamples } from "../domain/jobSamples.js";
import { findModel, listModels } from "../domain/models.js";
import { requireUser } from "../http/auth.js";
import { requireProject } from "../domain/accounts.js";
import { badRequest } from "../http/errors.js";
import { jobAdapterRoute, jobBaseModelRoute, jobEventsRoute, jobsApi } from "../../sdk/api/jobs.js";
import { adapterDownload, baseModelDownload } from "../domain/adapterDownload.js";
import { sendFile } from "../http/sendFile.js";
import { serveRoute, serveRoutes } from "../../server-shared/serveRoute.js";
import { projectScope, requiredProjectScope } from "./scope.js";
import { streamJobEvents } from "./jobEvents.js";

/** How a job's cancellation reaches the worker running it (the worker hub implements it). */
export interface JobCanceller {
  /** Asks the worker holding the job to stop; false when no worker holds it. */
  requestCancel(jobId: string): boolean;
  /** Wakes idle workers (on every instance) after a job was created; never rejects. */
  jobCreated(): Promise<void>;
}

export function jobRoutes(app: FastifyInstance, ctx: CloudContext, workers: JobCanceller): void {
  const jobLists = new JobListCache();
  /** The job `:id` names, in the request's project scope (404 outside it), and that scope. */
  const jobOf = async (request: FastifyRequest<{ Params: { id: string }; Querystring: { projectId?: string } }>) => {
    const scope = await projectScope(ctx, request, request.query.projectId);
    return { scope, job: await requireJobInProject(ctx, scope, request.params.id) };
  };

  serveRoutes(app, jobsApi, {
    createJob: async (request) => {
      const userId = await requireUser(ctx, request);
      const { projectId, name, config, datasetId, evalDatasetId } = request.body;
      // The contract's JobConfig rules (sdk/api/jobConfig.ts), every bad field at once: a job the trainer would refuse is never queued.
      const problems = jobConfigProblems(config);
      if (problems.length > 0) throw badRequest(describeConfigProblems(problems, "config."));
      await requireProject(ctx, userId, projectId);
      if (datasetId) await requireDataset(ctx, projectId, datasetId, "datasetId");
      if (evalDatasetId) await requireDataset(ctx, projectId, evalDatasetId, "evalDatasetId");
      await validateModel(ctx, config);
      const job = await createJob(ctx, { projectId, name, config, datasetId, evalDatasetId });
      void workers.jobCreated();
      return job;
    },
    listJobs: async (request, reply) => {
      const projectId = await requiredProjectScope(ctx, request, request.query.projectId);
      // The whole list is megabytes for thousands of jobs: kept serialised while it is unchanged
      // (jobListCache.ts), and sent as those bytes. Its version is the entity tag, so a relay that
      // kept the list (the studio) revalidates it with a 304 instead of fetching it again.
      const list = await jobLists.body(ctx, projectId);
      const etag = jobListEtag(projectId, list.version);
      reply.header("etag", etag);
      if (request.headers["if-none-match"] === etag) return reply.code(304).send();
      return reply.type("application/json; charset=utf-8").send(list.body);
    },
    getJob: async (request) => {
      const { job } = await jobOf(request);
      return { ...toJob(job), diskBytes: await jobDiskBytes(ctx, job) };
    },
    deleteJob: async (request) => {
      const { job } = await jobOf(request);
      await deleteJob(ctx, job.id);
    },
    listArtifacts: async (request) => listArtifacts(ctx, (await jobOf(request)).job.id),
    listJobSamples: async (request) => ({ checkpoints: await listJobSamples(ctx, (await jobOf(request)).job.id) }),
    gradeJobSamples: async (request) => {
      const { job } = await jobOf(request);
      const step = Number(request.params.step);
      if (!Number.isSafeInteger(step) || step < 0) throw badRequest("step must be a non-negative integer");
      return gradeJobSamples(ctx, job.id, JSON.parse(job.config), step, request.body.grades);
    },
    cancelJob: async (request) => {
      const { scope, job } = await jobOf(request);
      // The cloud ends the job itself, so cancel works with the worker gone or wedged; then the
      // worker is told to stop, and its own late events for the job are refused.
      if (await cancelJob(ctx, job.id)) workers.requestCancel(job.id);
      return toJob(await requireJobInProject(ctx, scope, job.id));
    },
  });

  // The adapter's bytes (GGUF, or PEFT's pair zipped), in scope like every job route: another project's job is a 404.
  serveRoute(app, jobAdapterRoute, async (request, reply) => {
    const { job } = await jobOf(request);
    const { format, step } = request.query;
    return sendFile(reply, await adapterDownload(ctx, job, { format, step }));
  });

  // The base GGUF the job trained on, for exports that merge the adapter into it or ship it beside it.
  serveRoute(app, jobBaseModelRoute, async (request, reply) => {
    const { job } = await jobOf(request);
    return sendFile(reply, await baseModelDownload(ctx, job));
  });

  serveRoute(app, jobEventsRoute, async (request, reply) => {
    const { job } = await jobOf(request);
    const resumeFrom = Number(request.headers["last-event-id"] ?? request.query.lastEventId ?? 0);
    // `?batch=1`: backlogs come as `batch` frames (jobEvents.ts); without it the stream is unchanged.
    await streamJobEvents(ctx, request, reply, job.id, Number.isFinite(resumeFrom) && resumeFrom > 0 ? resumeFrom : 0, request.query.batch === "1");
  });
}

/**
 * The job's model must be registered and trainable, and fit its maxSeqLength (the fields' own rules were checked before);
 * the SDK checks the same before uploading, this is the check no client can skip. Errors name the config field and list
 * what would work.
 */
async function validateModel(ctx: CloudContext, config: Record<string, unknown>): Promise<void> {
  if (typeof config.model !== "string") return;
  const model = await findModel(ctx, config.model);
  if (!model) {
    const trainable = (await listModels(ctx)).filter((m) => m.trainable).map((m) => m.name);
    throw badRequest(`config.model: unknown model "${config.model}"; trainable models registered: ${trainable.join(", ") || "none"}`, "unknown_model");
  }
  if (!model.trainable) {
    throw badRequest(`config.model: "${config.model}" can be served but not trained: ${model.notTrainableReason}`, "model_not_trainable");
  }
  const maxSeqLength = config.maxSeqLength;
  if (typeof maxSeqLength === "number" && model.contextLength && maxSeqLength > model.contextLength) {
    throw badRequest(`config.maxSeqLength: ${maxSeqLength} is longer than the context of "${model.name}" (${model.contextLength} tokens)`);
  }
}
