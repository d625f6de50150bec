/**
 * oidc-provider's storage adapter over the `oauth_payloads` table (SQLite and PostgreSQL alike).
 * One row per model instance, keyed by (kind, id); grant id, user code and uid are copied into
 * indexed columns for the provider's secondary lookups. Expired rows are not returned (the one
 * exception is below) and are swept from time to time.
 */
import type { Adapter, AdapterConstructor, AdapterPayload } from "oidc-provider";
import type { Store } from "../store/db.js";

const SWEEP_EVERY_MS = 60 * 60 * 1000;

/**
 * A device code stays readable this long after it expires, so the provider (which checks every
 * payload's own `exp` itself) can tell a polling client `expired_token` and the approval page
 * "that code has expired", as RFC 8628 section 3.5 asks, instead of "no such code".
 */
const EXPIRED_DEVICE_CODE_GRACE_MS = 30 * 60 * 1000;

export function kyselyAdapter(db: Store): AdapterConstructor {
  let lastSweep = Date.now(); // mountOAuth sweeps once at start
  const sweepNowAndThen = () => {
    if (Date.now() - lastSweep < SWEEP_EVERY_MS) return;
    lastSweep = Date.now();
    // Best effort: a failed sweep only leaves dead rows that reads already ignore.
    void sweepExpiredPayloads(db).catch(() => undefined);
  };

  return class KyselyAdapter implements Adapter {
    constructor(private readonly kind: string) {}

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      const row = {
        payload: JSON.stringify(payload),
        grant_id: payload.grantId ?? null,
        user_code: payload.userCode ?? null,
        uid: payload.uid ?? null,
        expires_at: expiresIn ? new Date(Date.now() + expiresIn * 1000).toISOString() : null,
      };
      await db
        .insertInto("oauth_payloads")
        .values({ kind: this.kind, id, consumed_at: null, ...row })
        // consumed_at is left alone on update: consuming is one-way and a later save must not undo it.
        .onConflict((oc) => oc.columns(["kind", "id"]).doUpdateSet(row))
        .execute();
      sweepNowAndThen();
    }

    find(id: string): Promise<AdapterPayload | undefined> {
      return this.findWhere("id", id);
    }

    findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      return this.findWhere("user_code", userCode);
    }

    findByUid(uid: string): Promise<AdapterPayload | undefined> {
      return this.findWhere("uid", uid);
    }

    async consume(id: string): Promise<void> {
      await db
        .updateTable("oauth_payloads")
        .set({ consumed_at: new Date().toISOString() })
        .where("kind", "=", this.kind)
        .where("id", "=", id)
        .where("consumed_at", "is", null)
        .execute();
    }

    async destroy(id: string): Promise<void> {
      await db.deleteFrom("oauth_payloads").where("kind", "=", this.kind).where("id", "=", id).execute();
    }

    /** Revoking a grant removes everything issued under it, whatever the kind. */
    async revokeByGrantId(grantId: string): Promise<void> {
      await db.deleteFrom("oauth_payloads").where("grant_id", "=", grantId).execute();
    }

    private async findWhere(column: "id" | "user_code" | "uid", value: string): Promise<AdapterPayload | undefined> {
      const grace = this.kind === "DeviceCode" ? EXPIRED_DEVICE_CODE_GRACE_MS : 0;
      const cutoff = new Date(Date.now() - grace).toISOString();
      const row = await db
        .selectFrom("oauth_payloads")
        .select(["payload", "consumed_at"])
        .where("kind", "=", this.kind)
        .where(column, "=", value)
        .where((eb) => eb.or([eb("expires_at", "is", null), eb("expires_at", ">", cutoff)]))
        .executeTakeFirst();
      if (!row) return undefined;
      const payload = JSON.parse(row.payload) as AdapterPayload;
      // The provider detects refresh-token and device-code replay by this epoch-seconds field.
      if (row.consumed_at && payload.consumed === undefined) payload.consumed = Math.floor(Date.parse(row.consumed_at) / 1000);
      return payload;
    }
  };
}

/** Deletes rows whose expiry has passed (ISO-8601 UTC strings compare in time order). */
export async function sweepExpiredPayloads(db: Store): Promise<void> {
  const now = Date.now();
  await db
    .deleteFrom("oauth_payloads")
    .where((eb) =>
      eb.or([
        eb.and([eb("kind", "!=", "DeviceCode"), eb("expires_at", "<=", new Date(now).toISOString())]),
        eb("expires_at", "<=", new Date(now - EXPIRED_DEVICE_CODE_GRACE_MS).toISOString()),
      ]),
    )
    .execute();
}
