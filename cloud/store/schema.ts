/**
 * Table types for Kysely. One schema serves SQLite and PostgreSQL, so it sticks to portable
 * column types: text ids (UUIDs), ISO-8601 text timestamps, integer booleans (0/1) and JSON as text.
 */
export interface UsersTable {
  id: string;
  kind: "anonymous" | "oauth";
  name: string;
  created_at: string;
}

export interface TokensTable {
  id: string;
  user_id: string | null;
  /** SHA-256 hex of the bearer token; the plaintext is never stored. */
  token_hash: string;
  kind: "anonymous" | "worker";
  created_at: string;
}

export interface OrgsTable {
  id: string;
  slug: string;
  name: string;
  created_at: string;
}

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  role: string;
}

export interface ProjectsTable {
  id: string;
  org_id: string;
  slug: string;
  name: string;
  created_at: string;
}

/** Raised with every change of a project's job list (migrations.ts, 0004); no row is version 0. */
export interface JobListVersionsTable {
  project_id: string;
  version: number;
}

export interface JobsTable {
  id: string;
  project_id: string;
  name: string;
  status: string;
  config: string;
  dataset_id: string | null;
  eval_dataset_id: string | null;
  artifact_count: number;
  error: string | null;
  /** Highest event seq appended so far; the next event gets last_seq + 1. */
  last_seq: number;
  worker_id: string | null;
  /** Fencing number: how many times a worker claimed the job; only the latest claim may report. */
  claim: number;
  /** Last event number stored from the current claim (workers number their own events). */
  worker_seq: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** One step's samples of a job (migration 0009): `data` is the JSON of a `samples.graded` event, custom grades merged in. */
export interface JobSamplesTable {
  job_id: string;
  step: number;
  data: string;
  created_at: string;
}

export interface JobEventsTable {
  job_id: string;
  seq: number;
  type: string;
  data: string;
  created_at: string;
}

export interface DatasetsTable {
  id: string;
  project_id: string;
  name: string;
  line_count: number;
  size_bytes: number;
  sha256: string;
  path: string;
  created_at: string;
}

export interface ArtifactsTable {
  id: string;
  job_id: string;
  kind: string;
  step: number;
  name: string;
  path: string;
  size_bytes: number;
  created_at: string;
}

export interface DeploymentsTable {
  id: string;
  project_id: string;
  /** Unique forever: a deleted deployment keeps its row (deleted_at set) so its URL is never reused. */
  slug: string;
  target_kind: string;
  target_job_id: string | null;
  target_step: number | null;
  target_model: string | null;
  auth_mode: string;
  enabled: number;
  custom_domain: string | null;
  run_retention_mode: string;
  run_retention_days: number;
  /** JSON array of allowed browser origins; null: the edge's default. */
  cors_origins: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface DeploymentKeysTable {
  id: string;
  deployment_id: string;
  label: string;
  prefix: string;
  /** SHA-256 hex of the plaintext key. */
  key_hash: string;
  enabled: number;
  last_used_at: string | null;
  created_at: string;
  /** After this instant (ISO 8601) the key is refused with 401 `expired`; null: never. */
  expires_at: string | null;
  requests_per_minute: number | null;
  /** bigint columns come back from PostgreSQL as strings. */
  tokens_per_minute: number | string | null;
  budget_tokens: number | string | null;
  budget_period: "total" | "day" | "month" | null;
  /** The key that replaced this one by rotation (this one then expires after its grace). */
  rotated_to: string | null;
}

/** The counters admission raises, one row per key with rules (migrations.ts, 0007). */
export interface DeploymentKeyMetersTable {
  key_id: string;
  /** Epoch milliseconds of the start of the key's current minute window. */
  window_start: number | string;
  window_requests: number;
  window_tokens: number | string;
  /** The budget period the counters below belong to ("" total, "2026-11-27" day, "2026-11" month). */
  period_start: string;
  period_tokens: number | string;
  /** Tokens held by requests in flight, at their most; returned when they end. */
  reserved_tokens: number | string;
  /**
   * Epoch ms until which the holds count: every admission with a hold pushes it on. Past it no
   * request can still be running, so holds left by a crashed instance are dropped (a new epoch).
   */
  held_until: number | string;
  /** Raised when stale holds are dropped; a request returns its hold only within its own epoch. */
  hold_epoch: number;
}

/** Usage per key and minute (ISO minute, "2026-11-27T12:04"). */
export interface DeploymentKeyUsageTable {
  key_id: string;
  deployment_id: string;
  minute: string;
  requests: number | string;
  errors: number | string;
  prompt_tokens: number | string;
  completion_tokens: number | string;
}

/** `metric`: "status" (bucket: the HTTP status), "latency" or "ttft" (bucket: usageHistogram.ts's). */
export interface DeploymentKeyUsageDetailTable {
  key_id: string;
  deployment_id: string;
  minute: string;
  metric: UsageDetailMetric;
  bucket: number;
  count: number | string;
}
export type UsageDetailMetric = "status" | "latency" | "ttft";

export interface BaseModelsTable {
  name: string;
  source: string;
  path: string | null;
  upstream_url: string | null;
  adapter_model: string | null;
  trainable: number;
  created_at: string;
  /** general.architecture of the GGUF (null for upstream servers and rows not yet inspected). */
  architecture: string | null;
  /** Parameter count; PostgreSQL returns bigint columns as strings, hence the union. */
  parameters: number | string | null;
  /** e.g. "Q4_K_M", "F16". */
  quantization: string | null;
  context_length: number | null;
  size_bytes: number | string | null;
  has_chat_template: number | null;
  /** One line saying why svc cannot train it (null when trainable). */
  not_trainable_reason: string | null;
  /** sha256 of the GGUF file, hex (null for upstream servers and rows registered before it was stored). */
  sha256: string | null;
  /** A vLLM upstream's folder for adapters loaded at run time, on the cloud's machine (null: it loads none). */
  lora_dir?: string | null;
  /** The same folder as the vLLM server reads it (null: the same path). */
  lora_dir_on_server?: string | null;
  /** The Hugging Face folder the GGUF was converted from, on the cloud's machine (null: added as a GGUF). */
  hf_folder?: string | null;
}

/** Storage of the OAuth provider (oidc-provider adapter): one row per model instance. */
export interface OauthPayloadsTable {
  id: string;
  kind: string;
  payload: string;
  grant_id: string | null;
  user_code: string | null;
  uid: string | null;
  expires_at: string | null;
  consumed_at: string | null;
}

/** One row, rewritten by the storage write probe. */
export interface WriteProbeTable {
  id: number;
  at: string;
}

/**
 * One row per worker link ever opened (cloud/workers/workerRegistry.ts): what its hello said and what it is doing,
 * written by the instance that holds the link, which also beats `last_seen_at` while the link is open. Shared by
 * every instance on one database, so any of them can list every worker.
 */
export interface WorkersTable {
  id: string;
  name: string;
  host: string;
  /** JSON array of backend names. */
  backends: string;
  /** JSON array of WorkerDevice. */
  devices: string;
  world_size: number;
  /** starting | idle | training | uploading | gone */
  state: string;
  /** JSON array of the job ids it runs. */
  job_ids: string;
  connected_at: string;
  last_seen_at: string;
  disconnected_at: string | null;
  /** JSON WorkerLlamaDevice: what its llama.cpp runs on; null until the worker reported it. */
  llama_device: string | null;
}

export interface Database {
  users: UsersTable;
  tokens: TokensTable;
  orgs: OrgsTable;
  org_members: OrgMembersTable;
  projects: ProjectsTable;
  job_list_versions: JobListVersionsTable;
  jobs: JobsTable;
  job_events: JobEventsTable;
  job_samples: JobSamplesTable;
  datasets: DatasetsTable;
  artifacts: ArtifactsTable;
  deployments: DeploymentsTable;
  deployment_keys: DeploymentKeysTable;
  deployment_key_meters: DeploymentKeyMetersTable;
  deployment_key_usage: DeploymentKeyUsageTable;
  deployment_key_usage_detail: DeploymentKeyUsageDetailTable;
  base_models: BaseModelsTable;
  oauth_payloads: OauthPayloadsTable;
  write_probe: WriteProbeTable;
  workers: WorkersTable;
}
