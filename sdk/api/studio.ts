/**
 * The studio's own `/api`, for the studio server (studio/routes/), the UI's transports and the panels' host: most
 * routes relay a cloud route under the studio's path, the studio's session choosing the project.
 */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { Manifest } from "../manifest.js";
import { AdapterChoice, jobEventsRoute, jobsApi, MergedExportChoice } from "./jobs.js";
import { DeploymentTarget, deploymentsApi } from "./deployments.js";
import { keysApi, UsageExportQuery, type KeyRules } from "./keys.js";
import { modelsApi } from "./models.js";
import { workersApi } from "./workers.js";
import { ChatMessages, MAX_TOKENS_LIMIT } from "./inference.js";
import type { DryRunReport } from "../trainer/dryRunReport.js";
import { relay, route, type ParamsOf, type QueryOf } from "./route.js";

/** `GET /api/environment`: facts about the studio's machine. */
/** `localhostSubdomainsResolve`: whether Node on the studio's machine resolves `<slug>.localhost` (Quick start picks its URL form from it). */
const StudioEnvironment = T.Object({ localhostSubdomainsResolve: T.Boolean() });
export type StudioEnvironment = Static<typeof StudioEnvironment>;

/** `GET /api/train`: whether a run is in flight, for every tab and panel, and how the last one ended. */
const TrainingStatus = T.Object({
  running: T.Boolean(),
  /** ISO time the run in flight started. */
  startedAt: T.Optional(T.String()),
  /** The last run that ended: its id (the `x-svc-run-id` header of its `POST /api/train`) and exit code (null: ended by a signal). */
  last: T.Optional(T.Object({ id: T.String(), exitCode: T.Union([T.Integer(), T.Null()]) })),
});
export type TrainingStatus = Static<typeof TrainingStatus>;

/** `GET /api/build`: the sources changed since `.svc/build/index.mjs` was built (empty: up to date, or no build yet). */
const BuildStatus = T.Object({ changed: T.Array(T.String()) });
export type BuildStatus = Static<typeof BuildStatus>;

/** Header of `POST /api/train` naming the run, so its client can ask `GET /api/train` how it ended. */
export const RUN_ID_HEADER = "x-svc-run-id";

/** Which credentials the studio uses (never the token); `minted`: anonymous ones were just created. */
const CredentialsInfo = T.Object({ kind: T.Union([T.Literal("anonymous"), T.Literal("oauth")]), cloudUrl: T.String(), minted: T.Boolean() });

/** Body of `POST /api/inference/chat` (the Playground), checked by the cloud once the studio relays it (studio/chatBody.ts). */
const ChatRequest = T.Object(
  {
    target: DeploymentTarget,
    messages: ChatMessages,
    temperature: T.Optional(T.Number({ minimum: 0, maximum: 2, errorMessage: "temperature must be a number from 0 to 2" })),
    maxTokens: T.Optional(T.Integer({ minimum: 1, maximum: MAX_TOKENS_LIMIT, errorMessage: `maxTokens must be an integer from 1 to ${MAX_TOKENS_LIMIT}` })),
  },
  { additionalProperties: true },
);
export type ChatRequest = Static<typeof ChatRequest>;

/**
 * `GET /api/datasets/preview`: the project's datasets as `svc start --dry-run --preview` reads them (the Datasets view):
 * `ok` with the dry run's report, each split with its preview (its verdict may still be "not ok": the view shows why);
 * `none` when the project registers no trainer; `error` when the dry run could not finish (a build error, a missing file).
 */
export type DatasetPreview = { status: "ok"; report: DryRunReport } | { status: "none" } | { status: "error"; error: string };
/** Typed only: the CLI writes it (DryRunReport, about 200 lines of nested types) and no answer is validated or serialised by schema. */
const DatasetPreviewAnswer = T.Unsafe<DatasetPreview>({ type: "object" });

/**
 * `GET /api/exports/:id`: how far the export the UI started under `exportId` has got, from what `svc export` last
 * said: `stage` its last step ("downloading the base model svc-tiny.gguf (4.3 MB)", "merging ..."), `percent` of
 * that step where it reports one, `done` once the file is sent or the export failed. 404 before it starts and
 * a minute after it ends.
 */
const ExportProgress = T.Object({ stage: T.String(), percent: T.Optional(T.Integer({ minimum: 0, maximum: 100 })), done: T.Boolean() });
export type ExportProgress = Static<typeof ExportProgress>;

/** The name a UI gives an export, to read its progress by: letters, digits and dashes (a UUID). */
const ExportId = T.String({ pattern: "^[A-Za-z0-9-]{8,64}$", errorMessage: "exportId must be 8 to 64 letters, digits or dashes" });

/** The JSON routes: one Transport method each, named by its key. */
export const studioApi = {
  getManifest: route({ method: "GET", path: "/api/manifest", response: Manifest }),
  /** Cheap (hashes the sources the last build read): the Run training panel asks it to show its stale-build banner. */
  getBuildStatus: route({ method: "GET", path: "/api/build", response: BuildStatus }),
  /** Rebuilds the trainer bundle and answers the fresh manifest (the banner's Rebuild). */
  rebuild: route({ method: "POST", path: "/api/build", response: Manifest }),
  getDatasetPreview: route({ method: "GET", path: "/api/datasets/preview", response: DatasetPreviewAnswer }),
  getEnvironment: route({ method: "GET", path: "/api/environment", response: StudioEnvironment }),
  getTrainingStatus: route({ method: "GET", path: "/api/train", response: TrainingStatus }),
  getExportProgress: route({ method: "GET", path: "/api/exports/:id", response: ExportProgress, args: (exportId: string) => ({ params: { id: exportId } }) }),
  /** Stops the run in flight, whichever tab or panel started it: `svc start` cancels its job as on Ctrl-C. Answers once it exited. */
  stopTraining: route({ method: "DELETE", path: "/api/train", response: TrainingStatus }),
  /** Mints anonymous credentials when there are none, with either method. */
  getCredentials: route({ method: "GET", path: "/api/credentials", response: CredentialsInfo }),
  ensureCredentials: route({ method: "POST", path: "/api/credentials", response: CredentialsInfo }),
  listJobs: relay(jobsApi.listJobs, "/api/jobs"),
  getJob: relay(jobsApi.getJob, "/api/jobs/:id"),
  cancelJob: relay(jobsApi.cancelJob, "/api/jobs/:id/cancel"),
  deleteJob: relay(jobsApi.deleteJob, "/api/jobs/:id"),
  listArtifacts: relay(jobsApi.listArtifacts, "/api/jobs/:id/artifacts"),
  listJobSamples: relay(jobsApi.listJobSamples, "/api/jobs/:id/samples"),
  listModels: relay(modelsApi.listModels, "/api/models"),
  /** The cloud's training workers and their devices (Overview's Workers card). */
  listWorkers: relay(workersApi.listWorkers, "/api/workers"),
  listDeployments: relay(deploymentsApi.listDeployments, "/api/deployments"),
  createDeployment: relay(deploymentsApi.createDeployment, "/api/deployments"),
  getDeployment: relay(deploymentsApi.getDeployment, "/api/deployments/:id"),
  updateDeployment: relay(deploymentsApi.updateDeployment, "/api/deployments/:id"),
  deleteDeployment: relay(deploymentsApi.deleteDeployment, "/api/deployments/:id"),
  listKeys: relay(keysApi.listDeploymentKeys, "/api/deployments/:id/keys"),
  issueKey: relay(keysApi.createDeploymentKey, "/api/deployments/:id/keys", (deploymentId: string, label: string, rules: KeyRules = {}) => ({
    params: { id: deploymentId },
    body: { label, ...rules },
  })),
  keyUsage: relay(keysApi.getDeploymentUsage, "/api/deployments/:id/usage"),
  usageReport: relay(keysApi.getDeploymentUsageReport, "/api/deployments/:id/usage/:range"),
  updateKey: relay(keysApi.updateDeploymentKey, "/api/deployments/:id/keys/:keyId"),
  rotateKey: relay(keysApi.rotateDeploymentKey, "/api/deployments/:id/keys/:keyId/rotate"),
  revokeKey: relay(keysApi.revokeDeploymentKey, "/api/deployments/:id/keys/:keyId"),
};
export type StudioApi = typeof studioApi;

/** The streamed routes: each transport reads them its own way (EventSource, text chunks, SSE chunks). */
export const studioStreams = {
  /** Runs `svc start`; the body is its raw output, `RUN_ID_HEADER` names the run. */
  train: route({ method: "POST", path: "/api/train" }),
  jobEvents: relay(jobEventsRoute, "/api/jobs/:id/events"),
  chat: route({ method: "POST", path: "/api/inference/chat", body: ChatRequest }),
};
export type StudioStreams = typeof studioStreams;

/**
 * The routes that answer a file to save (`produces: "file"`): the browser fetches one with the token header and saves
 * the blob, VS Code's host asks where and streams it into the file (`Transport.saveDownload`). The cloud's scope rules
 * hold (another project's job is a 404).
 */
export const studioDownloads = {
  /** A job's adapter, the final one or a checkpoint's (`step`), as GGUF or PEFT zipped; relayed from the cloud as its bytes arrive. */
  downloadAdapter: route({ method: "GET", path: "/api/jobs/:id/adapter", query: AdapterChoice, produces: "file" }),
  /**
   * `svc export` run as a child in the project, sent once it is done from a temporary folder removed afterwards: the
   * base model with the adapter merged in as one GGUF (`format` gguf-merged, the default); an Ollama folder
   * (Modelfile, base and adapter GGUF) or LM Studio's `svc/<job>/<file>.gguf` layout as a zip. `exportId` names
   * it for `getExportProgress`.
   */
  downloadMergedModel: route({
    method: "GET",
    path: "/api/jobs/:id/merged-model",
    query: T.Object({ ...MergedExportChoice.properties, exportId: T.Optional(ExportId) }),
    produces: "file",
  }),
  /** An endpoint's usage report over a range (hour, day, month) as CSV or JSON (sdk/usageCsv.ts). */
  downloadUsage: route({
    method: "GET",
    path: "/api/deployments/:id/usage/:range/export",
    query: T.Object({ format: UsageExportQuery.properties.format }),
    produces: "file",
  }),
};
export type StudioDownloads = typeof studioDownloads;

/** One download: the route by its key, with its path parameters and query. */
export type DownloadRequest = {
  [K in keyof StudioDownloads]: { route: K; params: ParamsOf<StudioDownloads[K]>; query: QueryOf<StudioDownloads[K]> };
}[keyof StudioDownloads];
