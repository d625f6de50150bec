/** API keys of a deployment. The plaintext exists only in the create response. */
import type { CreatedDeploymentKey, DeploymentKey } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { notFound } from "../http/errors.js";
import type { DeploymentKeysTable } from "../store/schema.js";
import { newId, nowIso } from "./ids.js";
import { generateDeploymentKey } from "./keys.js";

export async function listKeys(ctx: CloudContext, deploymentId: string): Promise<DeploymentKey[]> {
  const rows = await ctx.db
    .selectFrom("deployment_keys")
    .selectAll()
    .where("deployment_id", "=", deploymentId)
    .orderBy("created_at", "desc")
    .orderBy("id", "desc")
    .execute();
  return rows.map(toKey);
}

export async function createKey(ctx: CloudContext, deploymentId: string, label: string): Promise<CreatedDeploymentKey> {
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
  };
  await ctx.db.insertInto("deployment_keys").values(row).execute();
  return { ...toKey(row), key: generated.plaintext };
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

function toKey(row: DeploymentKeysTable): DeploymentKey {
  return {
    id: row.id,
    deploymentId: row.deployment_id,
    label: row.label,
    prefix: row.prefix,
    enabled: Boolean(Number(row.enabled)),
    lastUsedAt: row.last_used_at,
    createdAt: row.created_at,
  };
}
