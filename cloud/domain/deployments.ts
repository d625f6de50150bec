/** Deployments: a slug, a target (adapter, checkpoint or base model), an auth mode and an enabled flag. */
import type { CreateDeploymentInput, Deployment, DeploymentTarget, UpdateDeploymentInput } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { badRequest, conflict, notFound } from "../http/errors.js";
import type { DeploymentsTable } from "../store/schema.js";
import { newId, nowIso } from "./ids.js";

export const DEFAULT_RUN_RETENTION = { mode: "none", days: 30 } as const;

export async function listDeployments(ctx: CloudContext, projectId: string): Promise<Deployment[]> {
  const rows = await ctx.db
    .selectFrom("deployments")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("deleted_at", "is", null)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map((r) => toDeployment(ctx, r));
}

export async function requireDeployment(ctx: CloudContext, projectIds: string[], id: string): Promise<DeploymentsTable> {
  const row = await ctx.db.selectFrom("deployments").selectAll().where("id", "=", id).where("deleted_at", "is", null).executeTakeFirst();
  if (!row || !projectIds.includes(row.project_id)) throw notFound(`deployment ${id}`);
  return row;
}

export async function createDeployment(ctx: CloudContext, projectId: string, input: CreateDeploymentInput): Promise<Deployment> {
  await validateTarget(ctx, projectId, input.target);
  const taken = await ctx.db.selectFrom("deployments").select(["deleted_at"]).where("slug", "=", input.slug).executeTakeFirst();
  if (taken) throw slugTaken(input.slug, taken.deleted_at !== null);
  const now = nowIso();
  const row: DeploymentsTable = {
    id: newId(),
    project_id: projectId,
    slug: input.slug,
    ...targetColumns(input.target),
    auth_mode: input.authMode ?? "fixed_api_key",
    enabled: input.enabled === false ? 0 : 1,
    custom_domain: null,
    run_retention_mode: input.runRetentionMode ?? DEFAULT_RUN_RETENTION.mode,
    run_retention_days: input.runRetentionDays ?? DEFAULT_RUN_RETENTION.days,
    cors_origins: input.corsOrigins ? JSON.stringify(input.corsOrigins) : null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  try {
    await ctx.db.insertInto("deployments").values(row).execute();
  } catch (err) {
    // Two creates racing for one slug: the unique index decides, the loser gets the same 409.
    if (isUniqueViolation(err)) throw slugTaken(input.slug, false);
    throw err;
  }
  return toDeployment(ctx, row);
}

export async function updateDeployment(ctx: CloudContext, row: DeploymentsTable, patch: UpdateDeploymentInput): Promise<Deployment> {
  if (patch.target) await validateTarget(ctx, row.project_id, patch.target);
  const changes: Partial<DeploymentsTable> = {
    ...(patch.target ? targetColumns(patch.target) : {}),
    ...(patch.authMode ? { auth_mode: patch.authMode } : {}),
    ...(patch.enabled !== undefined ? { enabled: patch.enabled ? 1 : 0 } : {}),
    ...(patch.runRetentionMode !== undefined ? { run_retention_mode: patch.runRetentionMode } : {}),
    ...(patch.runRetentionDays !== undefined ? { run_retention_days: patch.runRetentionDays } : {}),
    ...(patch.corsOrigins !== undefined ? { cors_origins: patch.corsOrigins ? JSON.stringify(patch.corsOrigins) : null } : {}),
    updated_at: nowIso(),
  };
  await ctx.db.updateTable("deployments").set(changes).where("id", "=", row.id).execute();
  return toDeployment(ctx, { ...row, ...changes });
}

/** Deletes the deployment but keeps its row as a tombstone: the slug stays reserved forever. */
export async function deleteDeployment(ctx: CloudContext, row: DeploymentsTable): Promise<void> {
  const now = nowIso();
  await ctx.db.transaction().execute(async (trx) => {
    await trx.updateTable("deployments").set({ deleted_at: now, enabled: 0, updated_at: now }).where("id", "=", row.id).execute();
    await trx.updateTable("deployment_keys").set({ enabled: 0 }).where("deployment_id", "=", row.id).execute();
  });
}

/** A target must name something that exists in the project; the message names the field. */
async function validateTarget(ctx: CloudContext, projectId: string, target: DeploymentTarget): Promise<void> {
  if (target.kind === "base_model") {
    const model = await ctx.db.selectFrom("base_models").select("name").where("name", "=", target.name).executeTakeFirst();
    if (!model) throw badRequest(`target.name: unknown base model "${target.name}"`, "unknown_target");
    return;
  }
  const job = await ctx.db.selectFrom("jobs").select(["id", "project_id", "status"]).where("id", "=", target.jobId).executeTakeFirst();
  if (!job || job.project_id !== projectId) throw badRequest(`target.jobId: no job ${target.jobId} in this project`, "unknown_target");
  if (target.baseModel !== undefined) {
    const model = await ctx.db.selectFrom("base_models").select(["lora_dir"]).where("name", "=", target.baseModel).executeTakeFirst();
    if (!model) throw badRequest(`target.baseModel: unknown base model "${target.baseModel}"`, "unknown_target");
    if (!model.lora_dir) {
      throw badRequest(
        `target.baseModel: "${target.baseModel}" loads no adapters (register it as a vLLM upstream with a shared folder: svc models add --upstream URL --name NAME --lora-dir DIR)`,
        "unknown_target",
      );
    }
  }
  if (target.kind === "adapter") {
    if (job.status !== "completed") {
      throw badRequest(`target.jobId: job ${target.jobId} is ${job.status}; only a completed job has a final adapter`, "unknown_target");
    }
    return;
  }
  const checkpoint = await ctx.db
    .selectFrom("artifacts")
    .select("id")
    .where("job_id", "=", target.jobId)
    .where("kind", "=", "checkpoint")
    .where("step", "=", target.step)
    .executeTakeFirst();
  if (!checkpoint) throw badRequest(`target.step: job ${target.jobId} has no checkpoint at step ${target.step}`, "unknown_target");
}

function targetColumns(target: DeploymentTarget) {
  return {
    target_kind: target.kind,
    target_job_id: target.kind === "base_model" ? null : target.jobId,
    target_step: target.kind === "checkpoint" ? target.step : null,
    // An adapter's or checkpoint's base model, when a vLLM upstream serves it (null: the job's own base, on llama.cpp).
    target_model: target.kind === "base_model" ? target.name : (target.baseModel ?? null),
  };
}

export function targetOf(row: Pick<DeploymentsTable, "target_kind" | "target_job_id" | "target_step" | "target_model">): DeploymentTarget {
  if (row.target_kind === "base_model") return { kind: "base_model", name: row.target_model ?? "" };
  const onBase = row.target_model ? { baseModel: row.target_model } : {};
  if (row.target_kind === "checkpoint") return { kind: "checkpoint", jobId: row.target_job_id ?? "", step: Number(row.target_step), ...onBase };
  return { kind: "adapter", jobId: row.target_job_id ?? "", ...onBase };
}

export function corsOriginsOf(row: Pick<DeploymentsTable, "cors_origins">): string[] | null {
  return row.cors_origins ? (JSON.parse(row.cors_origins) as string[]) : null;
}

export function toDeployment(ctx: CloudContext, row: DeploymentsTable): Deployment {
  return {
    id: row.id,
    projectId: row.project_id,
    slug: row.slug,
    target: targetOf(row),
    authMode: row.auth_mode as Deployment["authMode"],
    enabled: Boolean(Number(row.enabled)),
    customDomain: row.custom_domain,
    runRetentionMode: row.run_retention_mode,
    runRetentionDays: Number(row.run_retention_days),
    corsOrigins: corsOriginsOf(row),
    url: `http://${row.slug}.${ctx.deployDomain}`,
    localUrl: `${ctx.edgeUrl}/d/${row.slug}`,
    createdAt: row.created_at,
  };
}

function slugTaken(slug: string, deleted: boolean) {
  return conflict(
    "slug_taken",
    deleted
      ? `The slug "${slug}" belonged to a deleted deployment and stays reserved. Choose another slug.`
      : `The slug "${slug}" is already taken. Choose another slug.`,
  );
}

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string };
  return e?.code === "SQLITE_CONSTRAINT_UNIQUE" || e?.code === "23505";
}
