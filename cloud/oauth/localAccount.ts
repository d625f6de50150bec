/**
 * Who approves a device sign-in. This cloud runs on the user's own machine, so the person at the
 * approval page is the local OS user: the first approval creates one OAuth user (with its own org)
 * named after them, and every later approval reuses it.
 *
 * The user id is derived from the OS user name rather than remembered somewhere, so the lookup
 * survives restarts, and two approvals racing to create the user (even from two cloud processes
 * sharing one PostgreSQL database) end with one row: the loser's insert fails on the primary key
 * and it reads the winner's user.
 */
import { createHash } from "node:crypto";
import os from "node:os";
import type { CloudContext } from "../context.js";
import { createUserWithOrg } from "../domain/accounts.js";

export interface LocalAccount {
  userId: string;
  name: string;
}

export function localUserName(): string {
  try {
    return os.userInfo().username || "local user";
  } catch {
    // userInfo() throws when the uid has no passwd entry (some containers).
    return process.env.USER || "local user";
  }
}

export async function ensureLocalAccount(ctx: CloudContext): Promise<LocalAccount> {
  const name = localUserName();
  const userId = nameBasedUuid(`svc-local-oauth-user:${name}`);
  if (await userExists(ctx, userId)) return { userId, name };
  try {
    await createUserWithOrg(ctx, { id: userId, kind: "oauth", name });
  } catch (err) {
    if (!(await userExists(ctx, userId))) throw err;
  }
  return { userId, name };
}

export async function findUserName(ctx: CloudContext, userId: string): Promise<string | undefined> {
  const row = await ctx.db.selectFrom("users").select("name").where("id", "=", userId).executeTakeFirst();
  return row?.name;
}

async function userExists(ctx: CloudContext, userId: string): Promise<boolean> {
  return (await findUserName(ctx, userId)) !== undefined;
}

/** A UUID (version 5 layout, SHA-256 based) that is the same for the same name every time. */
function nameBasedUuid(name: string): string {
  const bytes = createHash("sha256").update(name).digest().subarray(0, 16);
  bytes[6] = (bytes[6] & 0x0f) | 0x50;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
