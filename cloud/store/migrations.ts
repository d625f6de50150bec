/**
 * The one migration set, applied on start for SQLite and PostgreSQL alike. Migrations are
 * append-only: never edit a shipped one, add the next.
 */
import { type Kysely, type Migration, type MigrationProvider, Migrator } from "kysely";

const initial: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("users")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("tokens")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("user_id", "text", (c) => c.references("users.id"))
      .addColumn("token_hash", "text", (c) => c.notNull().unique())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("orgs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("slug", "text", (c) => c.notNull().unique())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("org_members")
      .addColumn("org_id", "text", (c) => c.notNull().references("orgs.id"))
      .addColumn("user_id", "text", (c) => c.notNull().references("users.id"))
      .addColumn("role", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("org_members_pk", ["org_id", "user_id"])
      .execute();
    await db.schema
      .createTable("projects")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("org_id", "text", (c) => c.notNull().references("orgs.id"))
      .addColumn("slug", "text", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("projects_org_slug", ["org_id", "slug"])
      .execute();
    await db.schema
      .createTable("datasets")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("line_count", "integer", (c) => c.notNull())
      .addColumn("size_bytes", "integer", (c) => c.notNull())
      .addColumn("sha256", "text", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("jobs")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id"))
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("status", "text", (c) => c.notNull())
      .addColumn("config", "text", (c) => c.notNull())
      .addColumn("dataset_id", "text", (c) => c.references("datasets.id"))
      .addColumn("eval_dataset_id", "text", (c) => c.references("datasets.id"))
      .addColumn("artifact_count", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("error", "text")
      .addColumn("last_seq", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("worker_id", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("started_at", "text")
      .addColumn("finished_at", "text")
      .execute();
    await db.schema.createIndex("jobs_project_created").on("jobs").columns(["project_id", "created_at"]).execute();
    await db.schema.createIndex("jobs_status").on("jobs").column("status").execute();
    await db.schema
      .createTable("job_events")
      .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id"))
      .addColumn("seq", "integer", (c) => c.notNull())
      .addColumn("type", "text", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("job_events_pk", ["job_id", "seq"])
      .execute();
    await db.schema
      .createTable("artifacts")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id"))
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("step", "integer", (c) => c.notNull())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("path", "text", (c) => c.notNull())
      .addColumn("size_bytes", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addUniqueConstraint("artifacts_job_name", ["job_id", "name"])
      .execute();
    await db.schema
      .createTable("deployments")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("project_id", "text", (c) => c.notNull().references("projects.id"))
      .addColumn("slug", "text", (c) => c.notNull().unique())
      .addColumn("target_kind", "text", (c) => c.notNull())
      .addColumn("target_job_id", "text")
      .addColumn("target_step", "integer")
      .addColumn("target_model", "text")
      .addColumn("auth_mode", "text", (c) => c.notNull())
      .addColumn("enabled", "integer", (c) => c.notNull())
      .addColumn("custom_domain", "text")
      .addColumn("run_retention_mode", "text", (c) => c.notNull())
      .addColumn("run_retention_days", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addColumn("updated_at", "text", (c) => c.notNull())
      .addColumn("deleted_at", "text")
      .execute();
    await db.schema
      .createTable("deployment_keys")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("deployment_id", "text", (c) => c.notNull().references("deployments.id"))
      .addColumn("label", "text", (c) => c.notNull())
      .addColumn("prefix", "text", (c) => c.notNull())
      .addColumn("key_hash", "text", (c) => c.notNull().unique())
      .addColumn("enabled", "integer", (c) => c.notNull())
      .addColumn("last_used_at", "text")
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema.createIndex("deployment_keys_deployment").on("deployment_keys").column("deployment_id").execute();
    await db.schema
      .createTable("base_models")
      .addColumn("name", "text", (c) => c.primaryKey())
      .addColumn("source", "text", (c) => c.notNull())
      .addColumn("path", "text")
      .addColumn("upstream_url", "text")
      .addColumn("adapter_model", "text")
      .addColumn("trainable", "integer", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("oauth_payloads")
      .addColumn("id", "text", (c) => c.notNull())
      .addColumn("kind", "text", (c) => c.notNull())
      .addColumn("payload", "text", (c) => c.notNull())
      .addColumn("grant_id", "text")
      .addColumn("user_code", "text")
      .addColumn("uid", "text")
      .addColumn("expires_at", "text")
      .addColumn("consumed_at", "text")
      .addPrimaryKeyConstraint("oauth_payloads_pk", ["kind", "id"])
      .execute();
    await db.schema.createIndex("oauth_payloads_grant").on("oauth_payloads").column("grant_id").execute();
    await db.schema.createIndex("oauth_payloads_user_code").on("oauth_payloads").column("user_code").execute();
    await db.schema.createIndex("oauth_payloads_uid").on("oauth_payloads").column("uid").execute();
  },
};

/**
 * What a GGUF says about itself, read from its header at registration: shown in the model lists
 * and pickers, and checked before a job is queued. `parameters` and `size_bytes` are bigint
 * because 7B+ parameters and 4 GiB+ files overflow PostgreSQL's 32-bit integer. Rows registered
 * before this migration keep NULL facts until the cloud's start fills them in.
 */
const baseModelFacts: Migration = {
  async up(db: Kysely<any>) {
    const columns: [string, "text" | "bigint" | "integer"][] = [
      ["architecture", "text"],
      ["parameters", "bigint"],
      ["quantization", "text"],
      ["context_length", "integer"],
      ["size_bytes", "bigint"],
      ["has_chat_template", "integer"],
      ["not_trainable_reason", "text"],
    ];
    // One ALTER per column: SQLite cannot add several in one statement.
    for (const [name, type] of columns) await db.schema.alterTable("base_models").addColumn(name, type).execute();
  },
};

/**
 * Fencing and the worker's own numbering: `claim` counts the claims of a job by workers (events
 * and uploads must carry the current one), `worker_seq` is the last event number stored from the
 * current claim. `last_seq` stays the job's one gap-free sequence, shared by cloud-written and
 * worker-written events.
 */
const jobClaims: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .alterTable("jobs")
      .addColumn("claim", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable("jobs")
      .addColumn("worker_seq", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    // Jobs claimed before this migration: their worker numbered its events in last_seq.
    await db
      .updateTable("jobs")
      .set((eb: any) => ({ worker_seq: eb.ref("last_seq"), claim: 1 }))
      .where("worker_id", "is not", null)
      .execute();
  },
};

/**
 * A version per project's job list, raised in the transaction of every change a `Job` shows (a
 * job created, a status change): `GET /v1/jobs` keeps the serialised list in memory and reads
 * only this row to know it is still current, also when other cloud instances share PostgreSQL.
 * A project with no row has version 0.
 */
const jobListVersions: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("job_list_versions")
      .addColumn("project_id", "text", (c) => c.primaryKey().references("projects.id"))
      .addColumn("version", "integer", (c) => c.notNull())
      .execute();
  },
};

/**
 * One row the cloud rewrites to prove the database still accepts writes (cloud/http/storageHealth.ts): /readyz runs
 * it while a storage failure is open, so readiness comes back on its own once space is freed.
 */
const writeProbe: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("write_probe")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("at", "text", (c) => c.notNull())
      .execute();
  },
};

/** Per-deployment CORS: a JSON array of allowed browser origins; NULL follows the edge's default (SVC_EDGE_CORS_ORIGINS, else any). */
const deploymentCors: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("deployments").addColumn("cors_origins", "text").execute();
  },
};

/**
 * The sha256 of a GGUF base model's file, computed at registration: assignments carry it, so a
 * remote worker caches the base by content and fetches it again when the model is replaced. Rows
 * registered before this migration get it when a job first needs it.
 */
const baseModelSha256: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("base_models").addColumn("sha256", "text").execute();
  },
};

/**
 * Keys with rules (expiry, requests and tokens per minute, a token budget per period) and their
 * meters. The rules live on the key; the counters the edge raises live in `deployment_key_meters`,
 * one row per key, so admission is one conditional UPDATE of one row, atomic on SQLite and on
 * PostgreSQL alike (several cloud instances share the row). `window_start` is in milliseconds
 * (bigint) and starts at a key's first request of a window, so tests move a window by rewriting it.
 * `deployment_key_usage` holds usage per key and minute, written in batches off the request path.
 */
const keyRules: Migration = {
  async up(db: Kysely<any>) {
    const columns: [string, "text" | "bigint" | "integer"][] = [
      ["expires_at", "text"],
      ["requests_per_minute", "integer"],
      ["tokens_per_minute", "bigint"],
      ["budget_tokens", "bigint"],
      ["budget_period", "text"],
      ["rotated_to", "text"],
    ];
    for (const [name, type] of columns) await db.schema.alterTable("deployment_keys").addColumn(name, type).execute();
    await db.schema
      .createTable("deployment_key_meters")
      .addColumn("key_id", "text", (c) => c.primaryKey().references("deployment_keys.id"))
      .addColumn("window_start", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("window_requests", "integer", (c) => c.notNull().defaultTo(0))
      .addColumn("window_tokens", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("period_start", "text", (c) => c.notNull().defaultTo(""))
      .addColumn("period_tokens", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("reserved_tokens", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("held_until", "bigint", (c) => c.notNull().defaultTo(0))
      .addColumn("hold_epoch", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable("deployment_key_usage")
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("deployment_id", "text", (c) => c.notNull())
      .addColumn("minute", "text", (c) => c.notNull())
      .addColumn("requests", "bigint", (c) => c.notNull())
      .addColumn("errors", "bigint", (c) => c.notNull())
      .addColumn("prompt_tokens", "bigint", (c) => c.notNull())
      .addColumn("completion_tokens", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("deployment_key_usage_pk", ["key_id", "minute"])
      .execute();
    await db.schema.createIndex("deployment_key_usage_deployment").on("deployment_key_usage").columns(["deployment_id", "minute"]).execute();
  },
};

/**
 * A vLLM upstream's shared adapter folder: where the cloud writes each deployed adapter's PEFT
 * files (`lora_dir`) and the same folder as the vLLM server reads it (`lora_dir_on_server`).
 */
const upstreamLoraDir: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("base_models").addColumn("lora_dir", "text").execute();
    await db.schema.alterTable("base_models").addColumn("lora_dir_on_server", "text").execute();
  },
};

/**
 * What usage per key and minute holds beside its totals: answers of status 400 and up counted per status, and
 * histograms of latency and time to first token (cloud/domain/usageHistogram.ts), one row per (key, minute, metric,
 * bucket) so a batch adds to it with one upsert, on SQLite and PostgreSQL alike. Kept as long as the usage rows.
 */
const usageDetail: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("deployment_key_usage_detail")
      .addColumn("key_id", "text", (c) => c.notNull())
      .addColumn("deployment_id", "text", (c) => c.notNull())
      .addColumn("minute", "text", (c) => c.notNull())
      .addColumn("metric", "text", (c) => c.notNull())
      .addColumn("bucket", "integer", (c) => c.notNull())
      .addColumn("count", "bigint", (c) => c.notNull())
      .addPrimaryKeyConstraint("deployment_key_usage_detail_pk", ["key_id", "minute", "metric", "bucket"])
      .execute();
    await db.schema.createIndex("deployment_key_usage_detail_deployment").on("deployment_key_usage_detail").columns(["deployment_id", "minute"]).execute();
  },
};

/**
 * A job's samples: per step, the eval prompts' answers and their grades (the `samples.graded`
 * event's data, JSON), kept apart from the event log because custom grades arrive later, from
 * the process that runs the trainer (possibly after the job ended, when its log takes nothing).
 */
const jobSamples: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("job_samples")
      .addColumn("job_id", "text", (c) => c.notNull().references("jobs.id"))
      .addColumn("step", "integer", (c) => c.notNull())
      .addColumn("data", "text", (c) => c.notNull())
      .addColumn("created_at", "text", (c) => c.notNull())
      .addPrimaryKeyConstraint("job_samples_pk", ["job_id", "step"])
      .execute();
  },
};

/** The worker list, shared by the instances on one database (WorkersTable). */
const workers: Migration = {
  async up(db: Kysely<any>) {
    await db.schema
      .createTable("workers")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("name", "text", (c) => c.notNull())
      .addColumn("host", "text", (c) => c.notNull())
      .addColumn("backends", "text", (c) => c.notNull())
      .addColumn("devices", "text", (c) => c.notNull())
      .addColumn("world_size", "integer", (c) => c.notNull())
      .addColumn("state", "text", (c) => c.notNull())
      .addColumn("job_ids", "text", (c) => c.notNull())
      .addColumn("connected_at", "text", (c) => c.notNull())
      .addColumn("last_seen_at", "text", (c) => c.notNull())
      .addColumn("disconnected_at", "text")
      .execute();
    await db.schema.createIndex("workers_last_seen").on("workers").column("last_seen_at").execute();
  },
};

/**
 * The Hugging Face folder a base model was converted from (`svc models add FOLDER`), referenced in
 * place: the torch backend trains from its safetensors; the GGUF converted from it serves. Null
 * for a model added as a GGUF.
 */
const baseModelHfFolder: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("base_models").addColumn("hf_folder", "text").execute();
  },
};

/** What each worker's llama.cpp runs on (WorkersTable.llama_device), reported after its hello. */
const workerLlamaDevice: Migration = {
  async up(db: Kysely<any>) {
    await db.schema.alterTable("workers").addColumn("llama_device", "text").execute();
  },
};

/** In order; exported for the upgrade test, which applies a prefix of them to make an old database. */
export const MIGRATIONS: Readonly<Record<string, Migration>> = {
  "0001_initial": initial,
  "0002_base_model_facts": baseModelFacts,
  "0003_job_claims": jobClaims,
  "0004_job_list_versions": jobListVersions,
  "0005_write_probe": writeProbe,
  "0006_deployment_cors": deploymentCors,
  "0007_base_model_sha256": baseModelSha256,
  "0008_key_rules": keyRules,
  "0009_upstream_lora_dir": upstreamLoraDir,
  "0010_usage_detail": usageDetail,
  "0011_job_samples": jobSamples,
  "0012_workers": workers,
  "0013_base_model_hf_folder": baseModelHfFolder,
  "0014_worker_llama_device": workerLlamaDevice,
};

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...MIGRATIONS };
  }
}

/** Brings the database to the newest schema; throws with the failing migration's error. */
export async function migrateToLatest(db: Kysely<any>): Promise<void> {
  const migrator = new Migrator({ db, provider: new StaticMigrationProvider() });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? "unknown error");
    throw new Error(`database migration ${failed?.migrationName ?? ""} failed: ${reason}`);
  }
}
