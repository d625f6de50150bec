/**
 * Wire types of the cloud API (DESIGN.md section 6). The cloud serialises exactly these shapes,
 * the SDK returns them, the studio passes them through, and the webview renders them.
 * Timestamps are ISO 8601 strings.
 */

export type JobStatus = "queued" | "running" | "completed" | "failed" | "cancelled";
export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ["completed", "failed", "cancelled"];

export interface Job {
  id: string;
  projectId: string;
  name: string;
  status: JobStatus;
  /** The trainer configuration the job runs with (model, hyper-parameters, dataset ids). */
  config: Record<string, unknown>;
  /** Number of artifacts the job produced (checkpoints and the final adapter). */
  artifactCount: number;
  /** Set when the job failed: the readable reason. */
  error: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** One entry of a job's append-only event log; `seq` is the SSE `id:` and starts at 1. */
export interface JobEvent {
  seq: number;
  type: JobEventType;
  data: Record<string, unknown>;
  createdAt: string;
}

export type JobEventType =
  | "training.started"
  | "training.log"
  | "training.progress"
  | "checkpoint.saved"
  | "training.completed"
  | "training.failed"
  | "training.cancelled";

export interface TrainingLogData {
  step: number;
  loss?: number | null;
  evalLoss?: number | null;
  learningRate?: number;
  epoch?: number;
  tokensPerSecond?: number;
}

export interface Artifact {
  id: string;
  jobId: string;
  /** "checkpoint" for an intermediate adapter, "adapter" for the final one, "file" for side files (adapter_config.json). */
  kind: "checkpoint" | "adapter" | "file";
  /** Training step the artifact was written at. */
  step: number;
  name: string;
  sizeBytes: number;
  createdAt: string;
}

export type DeploymentTarget =
  | { kind: "adapter"; jobId: string }
  | { kind: "checkpoint"; jobId: string; step: number }
  | { kind: "base_model"; name: string };

export type AuthMode = "fixed_api_key" | "none";

export interface Deployment {
  id: string;
  projectId: string;
  slug: string;
  target: DeploymentTarget;
  authMode: AuthMode;
  enabled: boolean;
  /** Reserved for a future feature; always null today. */
  customDomain: string | null;
  runRetentionMode: string;
  runRetentionDays: number;
  /** Browser origins allowed to call the endpoint (CORS), e.g. `["https://app.example.com"]`; null: the edge's default (any origin unless SVC_EDGE_CORS_ORIGINS narrows it). */
  corsOrigins: string[] | null;
  /** Public edge URL `http://<slug>.<deploy_domain>` (base URL for SDKs is this plus `/v1`). */
  url: string;
  /** Local alternative for clients that cannot resolve `*.localhost`: `http://127.0.0.1:E/d/<slug>`. */
  localUrl: string;
  createdAt: string;
}

export interface CreateDeploymentInput {
  slug: string;
  target: DeploymentTarget;
  authMode?: AuthMode;
  enabled?: boolean;
  runRetentionMode?: string;
  runRetentionDays?: number;
  /** See Deployment.corsOrigins; null restores the edge's default. */
  corsOrigins?: string[] | null;
}

export type UpdateDeploymentInput = Partial<Omit<CreateDeploymentInput, "slug">>;

export interface DeploymentKey {
  id: string;
  deploymentId: string;
  label: string;
  /** First 12 characters of the plaintext, safe to display. */
  prefix: string;
  enabled: boolean;
  lastUsedAt: string | null;
  createdAt: string;
}

/** Returned once, by key creation only: the only time the plaintext leaves the cloud. */
export interface CreatedDeploymentKey extends DeploymentKey {
  key: string;
}

export interface BaseModel {
  name: string;
  /** "gguf" for a local file served by llama.cpp, "upstream" for an OpenAI-compatible server. */
  source: "gguf" | "upstream";
  /** Whether svc can train adapters for it: a GGUF of a trainable architecture (llama, qwen2, qwen3). */
  trainable: boolean;
  /** One line saying why it cannot be trained (it can still be served); null when trainable. */
  notTrainableReason: string | null;
  /**
   * Facts read from the GGUF header at registration; null for upstream servers (and for a file
   * that could not be read again since). `parameters` counts weights, e.g. 596049920 for Qwen3 0.6B.
   */
  architecture: string | null;
  parameters: number | null;
  /** e.g. "Q4_K_M", "Q8_0", "F16". */
  quantization: string | null;
  /** Context the model was trained for, in tokens. */
  contextLength: number | null;
  sizeBytes: number | null;
  hasChatTemplate: boolean | null;
  createdAt: string;
}

export interface Project {
  id: string;
  orgId: string;
  orgSlug: string;
  slug: string;
  name: string;
  createdAt: string;
}

export interface Me {
  user: { id: string; kind: "anonymous" | "oauth"; name: string };
  orgs: { id: string; slug: string; name: string }[];
  projects: Project[];
}

export interface Dataset {
  id: string;
  projectId: string;
  name: string;
  lineCount: number;
  sizeBytes: number;
  createdAt: string;
}

/** Error envelope of the control plane: `{"error":{"code":"slug_taken","message":"..."}}`. */
export interface ErrorEnvelope {
  error: { code: string; message: string; requestId?: string };
}
