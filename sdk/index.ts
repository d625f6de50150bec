/**
 * The public SDK of svc: `import { CloudClient, ... } from "svc-studio"`.
 * Training (`createTrainer`, `createSvc`) is exported here as it lands.
 */
export { CloudClient, type CloudClientOptions, type CreateJobInput } from "./client.js";
export {
  ApiError,
  AuthenticationError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  InternalServerError,
  MissingStateError,
  NotFoundError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
} from "./errors.js";
export { ProjectSession, mintAnonymousCredentials, type SessionOptions } from "./session.js";
export { readCredentials, writeCredentials, deleteCredentials, type Credentials } from "./credentials.js";
export { readProjectState, writeProjectState, type ProjectState } from "./state.js";
export { validateChatJsonl, type ChatMessage, type JsonlReport } from "./jsonl.js";
export type * from "./wire.js";
export { TERMINAL_JOB_STATUSES } from "./wire.js";
export {
  createTrainer,
  createSvc,
  TrainerStoppedError,
  type Trainer,
  type TrainerCallbacks,
  type CreateTrainerOptions,
  type Svc,
  type InferFn,
} from "./trainer/trainer.js";
export type { DryRunReport, DryRunSplit, DryRunPlan, DryRunEstimate } from "./trainer/dryRunReport.js";
export type { DryRunOptions } from "./trainer/dryRun.js";
export {
  SUPPORTED_MODELS,
  TrainerConfigError,
  type ConfigProblem,
  type TrainerConfig,
  type LoraConfig,
  type EarlyStoppingConfig,
  type EvalMetric,
} from "./trainer/config.js";
export { logMessage } from "./logMessage.js";
