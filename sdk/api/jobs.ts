/** Training jobs: create, list, get, cancel, their artifacts and their event stream. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { ProjectQuery } from "./accounts.js";
import { GRADER_NAME_PATTERN, JobConfig } from "./jobConfig.js";
import { route } from "./route.js";

const JobStatus = T.Union([T.Literal("queued"), T.Literal("running"), T.Literal("completed"), T.Literal("failed"), T.Literal("cancelled")]);
export type JobStatus = Static<typeof JobStatus>;
const nullableString = T.Union([T.String(), T.Null()]);

export const Job = T.Object({
  id: T.String(),
  projectId: T.String(),
  name: T.String(),
  status: JobStatus,
  /** The trainer configuration the job runs with (model, hyper-parameters, samples and graders). */
  config: JobConfig,
  /** Number of artifacts the job produced (checkpoints and the final adapter). */
  artifactCount: T.Integer(),
  /** Set when the job failed: the readable reason. */
  error: nullableString,
  createdAt: T.String(),
  startedAt: nullableString,
  finishedAt: nullableString,
  /** Bytes the job keeps on the cloud's disk (its artifacts and datasets); sent by `getJob`, not in the list. */
  diskBytes: T.Optional(T.Integer()),
});
export type Job = Static<typeof Job>;

/** The named events of a job's stream (`GET /v1/jobs/:id/events`), each with a payload. */
export const JOB_EVENT_TYPES = [
  "training.started",
  "training.log",
  "training.progress",
  "checkpoint.saved",
  "samples.graded",
  "training.completed",
  "training.failed",
  "training.cancelled",
] as const;
export type JobEventType = (typeof JOB_EVENT_TYPES)[number];
/** One entry of a job's append-only event log; `seq` is the SSE `id:` and starts at 1. */
export const JobEvent = T.Object({
  seq: T.Integer(),
  type: T.Union(JOB_EVENT_TYPES.map((type) => T.Literal(type))),
  // Typed-only: each event type has its own payload (its writer, the worker, and its readers know which).
  data: T.Record(T.String(), T.Unknown()),
  createdAt: T.String(),
});
export type JobEvent = Static<typeof JobEvent>;

export const Artifact = T.Object({
  id: T.String(),
  jobId: T.String(),
  /** "checkpoint" for an intermediate adapter, "adapter" for the final one, "file" for side files (adapter_config.json). */
  kind: T.Union([T.Literal("checkpoint"), T.Literal("adapter"), T.Literal("file")]),
  /** Training step the artifact was written at. */
  step: T.Integer(),
  name: T.String(),
  sizeBytes: T.Integer(),
  createdAt: T.String(),
});
export type Artifact = Static<typeof Artifact>;

/** One eval prompt answered at a step: its grades by grader name (null: a custom grader that has not run, or threw). */
export const SampleRow = T.Object({
  prompt: T.String(),
  reference: T.String(),
  answer: T.String(),
  grades: T.Record(T.String(), T.Union([T.Boolean(), T.Null()])),
});
export type SampleRow = Static<typeof SampleRow>;

/** A step's samples (step 0: the base model), graded by the job's graders. */
export const SampleCheckpoint = T.Object({
  step: T.Integer(),
  /** The graders' names, in the trainer's order. */
  graders: T.Array(T.String()),
  samples: T.Array(SampleRow),
  /** Share of graded samples that pass every grader that ran; null with none graded. */
  passRate: T.Union([T.Number(), T.Null()]),
  /** Seconds the worker spent answering and grading them. */
  seconds: T.Number(),
});
export type SampleCheckpoint = Static<typeof SampleCheckpoint>;

const SampleGradesBody = T.Object({
  /** Per custom grader name, one grade per sample in the checkpoint's order (null: it threw). */
  grades: T.Record(T.String({ pattern: GRADER_NAME_PATTERN }), T.Array(T.Union([T.Boolean(), T.Null()]), { maxItems: 64 }), {
    errorMessage: "grades must map each custom grader's name to one grade per sample",
  }),
});
export type SampleGrades = Static<typeof SampleGradesBody>["grades"];

const CreateJobBody = T.Object({
  projectId: T.String({ errorMessage: "projectId is required" }),
  name: T.String({ minLength: 1, maxLength: 120, errorMessage: "name must be 1 to 120 characters" }),
  // The route checks that config is an object; the handler lists every bad field at once by JobConfig (ajv stops at the first).
  config: T.Unsafe<JobConfig>({ type: "object", errorMessage: "config must be an object" }),
  datasetId: T.Optional(T.String()),
  evalDatasetId: T.Optional(T.String()),
});
/** What `createJob` takes: the client adds its project. */
export type CreateJobInput = Omit<Static<typeof CreateJobBody>, "projectId">;

const byJobId = (jobId: string) => ({ params: { id: jobId } });
const scoped = { query: ProjectQuery, project: "query?", args: byJobId } as const;

export const jobsApi = {
  /** The whole list, newest first (no pagination). */
  listJobs: route({ method: "GET", path: "/v1/jobs", query: ProjectQuery, project: "query", response: T.Array(Job) }),
  getJob: route({ method: "GET", path: "/v1/jobs/:id", ...scoped, response: Job }),
  createJob: route({
    method: "POST",
    path: "/v1/jobs",
    body: CreateJobBody,
    project: "body",
    args: (input: CreateJobInput) => ({ body: input }),
    response: Job,
    status: 201,
  }),
  cancelJob: route({ method: "POST", path: "/v1/jobs/:id/cancel", ...scoped, response: Job }),
  /**
   * Deletes an ended job with its events, artifacts and the datasets no other job uses. 409
   * `job_active` while it is queued or running (cancel it first), 409 `job_deployed` naming the
   * deployments that serve its adapter.
   */
  deleteJob: route({ method: "DELETE", path: "/v1/jobs/:id", ...scoped, status: 204 }),
  listArtifacts: route({ method: "GET", path: "/v1/jobs/:id/artifacts", ...scoped, response: T.Array(Artifact) }),
  /** The job's samples, by step: checkpoint 0 (the base model), each checkpoint and the end. */
  listJobSamples: route({ method: "GET", path: "/v1/jobs/:id/samples", ...scoped, response: T.Object({ checkpoints: T.Array(SampleCheckpoint) }) }),
  /**
   * A custom grader's grades of one step's samples, posted by the process that runs the trainer
   * (`svc start`, where the function lives). Only graders the job config names as custom; 404
   * `not_found` for a step without samples.
   */
  gradeJobSamples: route({
    method: "POST",
    path: "/v1/jobs/:id/samples/:step/grades",
    query: ProjectQuery,
    project: "query?",
    body: SampleGradesBody,
    args: (jobId: string, step: number, grades: SampleGrades) => ({ params: { id: jobId, step: String(step) }, body: { grades } }),
    response: SampleCheckpoint,
  }),
};

/**
 * Which adapter files to download: the GGUF llama.cpp loads on the unmodified base, or PEFT's pair
 * (`adapter_model.safetensors` + `adapter_config.json`) as one zip; the final adapter, or the
 * checkpoint saved at `step`.
 */
export const AdapterChoice = T.Object({
  format: T.Union([T.Literal("gguf"), T.Literal("peft")], { errorMessage: 'format must be "gguf" or "peft"' }),
  step: T.Optional(T.Integer({ minimum: 0, errorMessage: "step must be the step of one of the job's checkpoints" })),
});
export type AdapterChoice = Static<typeof AdapterChoice>;
export type AdapterFormat = AdapterChoice["format"];

/** The formats of `svc export` that need the base model: the studio runs the CLI for them and sends what it wrote. */
export const MODEL_EXPORT_FORMATS = ["gguf-merged", "ollama", "lmstudio"] as const;
export type ModelExportFormat = (typeof MODEL_EXPORT_FORMATS)[number];

/**
 * A model to export (`svc export --format F`): the merged GGUF (default), an Ollama folder (Modelfile, base and
 * adapter GGUF) or LM Studio's `svc/<job>/<file>.gguf` layout, both zipped; the merged weights' type (not for
 * Ollama, which keeps the base as it is), and the final adapter or a checkpoint's.
 */
export const MergedExportChoice = T.Object({
  format: T.Optional(
    T.Union([T.Literal("gguf-merged"), T.Literal("ollama"), T.Literal("lmstudio")], { errorMessage: 'format must be "gguf-merged", "ollama" or "lmstudio"' }),
  ),
  quant: T.Optional(T.Union([T.Literal("q8_0"), T.Literal("f16"), T.Literal("q4_k_m")], { errorMessage: 'quant must be "q8_0", "f16" or "q4_k_m"' })),
  step: T.Optional(T.Integer({ minimum: 0, errorMessage: "step must be the step of one of the job's checkpoints" })),
});
export type MergedExportChoice = Static<typeof MergedExportChoice>;

/**
 * The artifact names a worker uploads an adapter under (cloud/workers/trainerWorker.ts): the final one's, or those of
 * the checkpoint at `step`; the PEFT pair's names inside a download are the plain ones.
 */
export function adapterArtifactNames(step?: number): { gguf: string; weights: string; config: string } {
  const weights = "adapter_model.safetensors";
  const config = "adapter_config.json";
  if (step === undefined) return { gguf: "adapter.gguf", weights, config };
  return { gguf: `checkpoint-${step}.gguf`, weights: `checkpoint-${step}.${weights}`, config: `checkpoint-${step}.${config}` };
}

/** The adapter's bytes, streamed from the cloud's disk, named by Content-Disposition (cloud/routes/jobs.ts). */
export const jobAdapterRoute = route({
  method: "GET",
  path: "/v1/jobs/:id/adapter",
  ...scoped,
  query: T.Object({ projectId: T.Optional(T.String()), ...AdapterChoice.properties }),
  produces: "file",
});

/**
 * The GGUF of the base model a job trained on (the file the cloud serves it from), so a client can
 * export the adapter merged into it or beside it (`svc export`). Same scope as the job.
 */
export const jobBaseModelRoute = route({ method: "GET", path: "/v1/jobs/:id/base-model", ...scoped, produces: "file" });

/**
 * SSE of the project's job list: `event: version` with `{ etag, immediate }` at once and after each
 * change, `etag` being the ETag `GET /v1/jobs` answers with at that version. `immediate` is true
 * where every change is announced before the request that made it is answered (a single cloud
 * instance): a relay on the same machine may then answer from the list it kept while the ETags
 * match (studio/jobListWatch.ts). Where false, announcements can lag; revalidate instead.
 */
export const jobListWatchRoute = route({ method: "GET", path: "/v1/jobs/watch", query: ProjectQuery, project: "query", produces: "event-stream" });

/** The data of a `version` event of `jobListWatchRoute`. */
export interface JobListVersion {
  etag: string;
  immediate: boolean;
}

/** SSE with resume (`Last-Event-ID`, or `?lastEventId=`); `?batch=1` sends backlogs as `batch` frames (cloud/routes/jobEvents.ts). */
export const jobEventsRoute = route({
  method: "GET",
  path: "/v1/jobs/:id/events",
  ...scoped,
  query: T.Object({
    projectId: T.Optional(T.String()),
    lastEventId: T.Optional(T.String({ pattern: "^(0|[1-9][0-9]*)$", errorMessage: "lastEventId must be the seq of an event (a non-negative integer)" })),
    batch: T.Optional(T.String()),
  }),
  produces: "event-stream",
});
