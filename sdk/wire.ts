/**
 * Wire types of the cloud API (DESIGN.md section 6): `Static<>` of the contract's schemas in
 * `sdk/api/`, which the cloud validates with, the SDK returns, the studio relays and the UI renders.
 * Timestamps are ISO 8601 strings.
 */
import type { JobStatus } from "./api/jobs.js";

export type { JobConfig } from "./api/jobConfig.js";
export type { Job, JobStatus, JobEvent, JobEventType, Artifact, CreateJobInput, SampleCheckpoint, SampleGrades, SampleRow } from "./api/jobs.js";
export type { AuthMode, CreateDeploymentInput, Deployment, DeploymentTarget, UpdateDeploymentInput } from "./api/deployments.js";
export type {
  CreatedDeploymentKey,
  CreateKeyInput,
  DeploymentKey,
  KeyBudget,
  KeyLimits,
  KeyRules,
  KeyUsage,
  UpdateKeyInput,
  UsageBucket,
  UsageRange,
  UsageReport,
  UsageRow,
} from "./api/keys.js";
export type { BaseModel } from "./api/models.js";
export type { Me, Project } from "./api/accounts.js";
export type { Dataset } from "./api/datasets.js";
export type { InferenceChatInput } from "./api/inference.js";

export const TERMINAL_JOB_STATUSES: readonly JobStatus[] = ["completed", "failed", "cancelled"];

export interface TrainingLogData {
  step: number;
  loss?: number | null;
  evalLoss?: number | null;
  /** Share of the step's loss-carrying tokens whose most likely next token was the target (0 to 1). */
  tokenAccuracy?: number | null;
  /** The same over the eval set, on evaluation steps beside evalLoss. */
  evalTokenAccuracy?: number | null;
  learningRate?: number;
  epoch?: number;
  tokensPerSecond?: number;
}

/** Error envelope of the control plane: `{"error":{"code":"slug_taken","message":"..."}}`. */
export interface ErrorEnvelope {
  error: { code: string; message: string; requestId?: string };
}
