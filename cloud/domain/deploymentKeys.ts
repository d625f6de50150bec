/** API keys of a deployment and their rules. The plaintext exists only in the create (or rotate) response. */
import { EXPIRES_AT_RULE, type KeyRules } from "../../sdk/api/keys.js";
import type { CreatedDeploymentKey, DeploymentKey, KeyBudget, UsageRow } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { badRequest, notFound } from "../http/errors.js";
import type { DeploymentKeyMetersTable, DeploymentKeysTable } from "../store/schema.js";
import { newId, nowIso } from "./ids.js";
import { budgetPeriodStart, MINUTE_MS } from "./keyPeriods.js";
import { generateDeploymentKey } from "./keys.js";

type RuleColumns = Pick<DeploymentKeysTable, "expires_at" | "requests_per_minute" | "tokens_per_minute" | "budget_tokens" | "budget_period">;
interface Totals {
  requests: number;
  prompt: number;
  completion: number;
}

export async function listKeys(ctx: CloudContext, deploymentId: string, nowMs = Date.now()): Promise<DeploymentKey[]> {
  const rows = await ctx.db
    .selectFrom("deployment_keys")
    .selectAll()
    .where("deployment_id", "=", deploymentId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  const meters = await ctx.db
    .selectFrom("deployment_key_meters")
    .selectAll()
    .where("key_id", "in", rows.length ? rows.map((r) => r.id) : [""])
    .execute();
  const totals = await ctx.db
    .selectFrom("deployment_key_usage")
    .select((eb) => [
      "key_id",
      eb.fn.sum<string>("requests").as("requests"),
      eb.fn.sum<string>("prompt_tokens").as("prompt"),
      eb.fn.sum<string>("completion_tokens").as("completion"),
    ])
    .where("deployment_id", "=", deploymentId)
    .groupBy("key_id")
    .execute();
  const meterOf = new Map(meters.map((m) => [m.key_id, m]));
  const totalsOf = new Map(totals.map((t) => [t.key_id, { requests: Number(t.requests), prompt: Number(t.prompt), completion: Number(t.completion) }]));
  return rows.map((row) => toKey(row, meterOf.get(row.id), totalsOf.get(row.id), nowMs));
}

/** Reads and checks the rules of a create or update body into columns; only the fields present. */
export function ruleColumns(rules: KeyRules): Partial<RuleColumns> {
  const out: Partial<RuleColumns> = {};
  if (rules.expiresAt !== undefined) {
    if (rules.expiresAt !== null && !Number.isFinite(Date.parse(rules.expiresAt))) throw badRequest(EXPIRES_AT_RULE);
    out.expires_at = rules.expiresAt === null ? null : new Date(rules.expiresAt).toISOString();
  }
  if (rules.limits !== undefined) {
    out.requests_per_minute = rules.limits?.requestsPerMinute ?? null;
    out.tokens_per_minute = rules.limits?.tokensPerMinute ?? null;
  }
  if (rules.budget !== undefined) {
    out.budget_tokens = rules.budget?.tokens ?? null;
    out.budget_period = rules.budget?.period ?? null;
  }
  return out;
}

export async function createKey(ctx: CloudContext, deploymentId: string, label: string, rules: KeyRules = {}): Promise<CreatedDeploymentKey> {
  const generated = generateDeploymentKey();
  const row: DeploymentKeysTable = {
    id: newId(),
    deployment_id: deploymentId,
    label,
    prefix: generated.prefix,
    key_hash: generated.hash,
    enabled: 1,
    last_used_at: null,
    created_at: nowIso(),
    expires_at: null,
    requests_per_minute: null,
    tokens_per_minute: null,
    budget_tokens: null,
    budget_period: null,
    rotated_to: null,
    ...ruleColumns(rules),
  };
  await ctx.db.transaction().execute(async (trx) => {
    await trx.insertInto("deployment_keys").values(row).execute();
    await trx.insertInto("deployment_key_meters").values(emptyMeter(row.id)).execute();
  });
  return { ...toKey(row, undefined, undefined, Date.now()), key: generated.plaintext };
}

export async function updateKey(
  ctx: CloudContext,
  deploymentId: string,
  keyId: string,
  changes: Partial<RuleColumns> & { label?: string },
): Promise<DeploymentKey> {
  await requireKey(ctx, deploymentId, keyId);
  if (Object.keys(changes).length > 0) await ctx.db.updateTable("deployment_keys").set(changes).where("id", "=", keyId).execute();
  // Keys made before rules existed have no meter row yet.
  await ctx.db
    .insertInto("deployment_key_meters")
    .values(emptyMeter(keyId))
    .onConflict((oc) => oc.column("key_id").doNothing())
    .execute();
  const keys = await listKeys(ctx, deploymentId);
  return keys.find((k) => k.id === keyId)!;
}

/**
 * A new key with the old one's label and rules; the old one expires after `graceSeconds` (sooner
 * if it expired sooner anyway). Usage and budgets are counted per key.
 */
export async function rotateKey(
  ctx: CloudContext,
  deploymentId: string,
  keyId: string,
  graceSeconds: number,
  nowMs = Date.now(),
): Promise<CreatedDeploymentKey> {
  const old = await requireKey(ctx, deploymentId, keyId);
  if (!Number(old.enabled)) throw badRequest("a revoked key cannot be rotated");
  const created = await createKey(ctx, deploymentId, old.label, {
    expiresAt: old.expires_at,
    limits: { requestsPerMinute: old.requests_per_minute, tokensPerMinute: nullableNumber(old.tokens_per_minute) },
    budget: old.budget_tokens === null ? null : { tokens: Number(old.budget_tokens), period: old.budget_period ?? "total" },
  });
  const graceEnd = nowMs + graceSeconds * 1000;
  const expiresAt = old.expires_at !== null && Date.parse(old.expires_at) < graceEnd ? old.expires_at : new Date(graceEnd).toISOString();
  await ctx.db.updateTable("deployment_keys").set({ expires_at: expiresAt, rotated_to: created.id }).where("id", "=", keyId).execute();
  return created;
}

/** Revoking keeps the key listed (struck through in the UI) with enabled=false. */
export async function revokeKey(ctx: CloudContext, deploymentId: string, keyId: string): Promise<void> {
  const result = await ctx.db
    .updateTable("deployment_keys")
    .set({ enabled: 0 })
    .where("id", "=", keyId)
    .where("deployment_id", "=", deploymentId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw notFound(`key ${keyId}`);
}

/** Usage of a deployment per key and minute since `sinceMs`, oldest first. */
export async function deploymentUsage(ctx: CloudContext, deploymentId: string, sinceMs: number): Promise<UsageRow[]> {
  const rows = await ctx.db
    .selectFrom("deployment_key_usage as u")
    .innerJoin("deployment_keys as k", "k.id", "u.key_id")
    .select(["u.key_id", "k.prefix", "u.minute", "u.requests", "u.errors", "u.prompt_tokens", "u.completion_tokens"])
    .where("u.deployment_id", "=", deploymentId)
    .where("u.minute", ">=", new Date(sinceMs).toISOString().slice(0, 16))
    .orderBy("u.minute")
    .orderBy("u.key_id")
    .execute();
  return rows.map((r) => ({
    keyId: r.key_id,
    keyPrefix: r.prefix,
    minute: r.minute,
    requests: Number(r.requests),
    errors: Number(r.errors),
    promptTokens: Number(r.prompt_tokens),
    completionTokens: Number(r.completion_tokens),
  }));
}

async function requireKey(ctx: CloudContext, deploymentId: string, keyId: string): Promise<DeploymentKeysTable> {
  const row = await ctx.db.selectFrom("deployment_keys").selectAll().where("id", "=", keyId).where("deployment_id", "=", deploymentId).executeTakeFirst();
  if (!row) throw notFound(`key ${keyId}`);
  return row;
}

function emptyMeter(keyId: string): DeploymentKeyMetersTable {
  return {
    key_id: keyId,
    window_start: 0,
    window_requests: 0,
    window_tokens: 0,
    period_start: "",
    period_tokens: 0,
    reserved_tokens: 0,
    held_until: 0,
    hold_epoch: 0,
  };
}

function nullableNumber(value: number | string | null): number | null {
  return value === null ? null : Number(value);
}

export function budgetOf(row: Pick<DeploymentKeysTable, "budget_tokens" | "budget_period">): KeyBudget | null {
  return row.budget_tokens === null ? null : { tokens: Number(row.budget_tokens), period: row.budget_period ?? "total" };
}

function toKey(row: DeploymentKeysTable, meter: DeploymentKeyMetersTable | undefined, totals: Totals | undefined, nowMs: number): DeploymentKey {
  const budget = budgetOf(row);
  const windowOpen = meter !== undefined && Number(meter.window_start) > nowMs - MINUTE_MS;
  const samePeriod = meter !== undefined && budget !== null && meter.period_start === budgetPeriodStart(budget.period, nowMs);
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    label: row.label,
    prefix: row.prefix,
    enabled: Boolean(Number(row.enabled)),
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    limits: {
      requestsPerMinute: row.requests_per_minute === null ? null : Number(row.requests_per_minute),
      tokensPerMinute: nullableNumber(row.tokens_per_minute),
    },
    budget,
    rotatedTo: row.rotated_to,
    usage: {
      requests: totals?.requests ?? 0,
      promptTokens: totals?.prompt ?? 0,
      completionTokens: totals?.completion ?? 0,
      minuteRequests: windowOpen ? Number(meter.window_requests) : 0,
      minuteTokens: windowOpen ? Number(meter.window_tokens) : 0,
      budgetTokens: samePeriod ? Number(meter.period_tokens) : 0,
    },
  };
}
