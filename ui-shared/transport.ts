/**
 * The one interface every Svelte component talks to (STYLE.md 4). The browser SPA implements it
 * with fetch/EventSource against the studio (`http.ts`); VS Code panels implement it with
 * postMessage to the extension host (`vscode.ts`). Components never know which one they have.
 */
import type {
  Artifact,
  BaseModel,
  CreateDeploymentInput,
  CreatedDeploymentKey,
  Deployment,
  DeploymentKey,
  DeploymentTarget,
  Job,
  UpdateDeploymentInput,
} from "../sdk/wire.js";
import type { JobStreamEvent } from "./eventLog.js";

/** `GET /api/manifest`: the project's registered trainer, none, or the build error. */
export type { Manifest } from "../sdk/manifest.js";
import type { Manifest } from "../sdk/manifest.js";

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** Body of `POST /api/inference/chat`. */
export interface ChatRequest {
  target: DeploymentTarget;
  messages: ChatMessage[];
  temperature?: number;
  maxTokens?: number;
}

export type { StudioEnvironment, TrainingStatus } from "../sdk/studioWire.js";
import type { StudioEnvironment, TrainingStatus } from "../sdk/studioWire.js";

/** Callbacks of a job event subscription. */
export interface JobEventHandlers {
  /** A named training event arrived (any frame also clears the "interrupted" banner). */
  onEvent(event: JobStreamEvent): void;
  /**
   * Many events arrived in one frame (the history when the page opens, or a backlog after a
   * reconnect), in order: apply them in one pass, with the same result as calling onEvent on each.
   */
  onEvents(events: readonly JobStreamEvent[]): void;
  /** The connection broke; the transport keeps retrying on its own. */
  onError(): void;
  /** The server sent `end`: the stream is closed for good and will not reconnect. */
  onEnd(): void;
}

/** A file the user downloads from a view (the job chart's CSV / JSON export). */
export interface SaveFileRequest {
  /** Suggested file name, e.g. `run-0123abcd-metrics.csv`. */
  name: string;
  /** MIME type of the content, e.g. `text/csv`. */
  mimeType: string;
  /** The whole file, as UTF-8 text. */
  text: string;
}

/** Stops a subscription; safe to call more than once. */
export type Unsubscribe = () => void;

/** Error of any transport call: HTTP status (0 for network/timeout), upstream code and readable message. */
export class TransportError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "TransportError";
  }
}

/** Readable text for any thrown value, for banners and inline form errors. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export interface Transport {
  getManifest(): Promise<Manifest>;
  getEnvironment(): Promise<StudioEnvironment>;
  /**
   * Runs the project's trainer (`POST /api/train`), calling `onOutput` with each chunk of raw
   * stdout+stderr until the process ends. Rejects with status 409 when a run is already in flight,
   * and with code `run_failed` when `svc start` exited with an error (e.g. before any job existed).
   */
  runTraining(onOutput: (text: string) => void, signal?: AbortSignal): Promise<void>;
  /** Whether a run is in flight, whichever tab or panel started it (`GET /api/train`). */
  getTrainingStatus(): Promise<TrainingStatus>;
  /**
   * Stops the run in flight, whichever tab or panel started it (`DELETE /api/train`): `svc start`
   * cancels its job as on Ctrl-C. Resolves once it exited, with the status saying how it ended.
   */
  stopTraining(): Promise<TrainingStatus>;

  listJobs(): Promise<Job[]>;
  getJob(id: string): Promise<Job>;
  cancelJob(id: string): Promise<Job>;
  listArtifacts(jobId: string): Promise<Artifact[]>;
  /**
   * Live training events of one job (SSE `GET /api/jobs/:id/events?batch=1`), replayed from the
   * start; the history arrives in bulk through `onEvents`.
   */
  subscribeJobEvents(jobId: string, handlers: JobEventHandlers): Unsubscribe;

  listModels(): Promise<BaseModel[]>;

  listDeployments(): Promise<Deployment[]>;
  createDeployment(input: CreateDeploymentInput): Promise<Deployment>;
  getDeployment(id: string): Promise<Deployment>;
  updateDeployment(id: string, patch: UpdateDeploymentInput): Promise<Deployment>;
  deleteDeployment(id: string): Promise<void>;
  listKeys(deploymentId: string): Promise<DeploymentKey[]>;
  issueKey(deploymentId: string, label: string): Promise<CreatedDeploymentKey>;
  revokeKey(deploymentId: string, keyId: string): Promise<void>;

  /** Streams a chat completion (`POST /api/inference/chat`), calling `onDelta` with each text piece. */
  streamChat(request: ChatRequest, onDelta: (text: string) => void, signal?: AbortSignal): Promise<void>;

  /** Copies text; VS Code webviews route this through the host because the clipboard API may be blocked. */
  copyText(text: string): Promise<void>;
  /**
   * Saves a file for the user: a browser download in the SPA; in VS Code a save dialog on the host
   * (a webview cannot download). Resolves once saved, or when the user dismissed the dialog.
   */
  saveFile(file: SaveFileRequest): Promise<void>;
}
