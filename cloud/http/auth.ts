/**
 * Bearer-token authentication for the control plane. Tokens are looked up by SHA-256, so a
 * leaked database does not leak usable tokens.
 */
import type { FastifyRequest } from "fastify";
import type { CloudContext, Principal } from "../context.js";
import { sha256Hex } from "../domain/ids.js";
import { forbidden, unauthorized } from "./errors.js";

declare module "fastify" {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1] : null;
}

export async function resolvePrincipal(ctx: CloudContext, token: string): Promise<Principal | null> {
  const row = await ctx.db.selectFrom("tokens").select(["user_id", "kind"]).where("token_hash", "=", sha256Hex(token)).executeTakeFirst();
  if (row) return { kind: row.kind, userId: row.user_id };
  for (const resolve of ctx.tokenResolvers) {
    const principal = await resolve(token);
    if (principal) return principal;
  }
  return null;
}

/** Authenticates the request or throws 401; caches the principal on the request. */
export async function requirePrincipal(ctx: CloudContext, request: FastifyRequest): Promise<Principal> {
  if (request.principal) return request.principal;
  const token = bearerToken(request);
  if (!token) throw unauthorized();
  const principal = await resolvePrincipal(ctx, token);
  if (!principal) throw unauthorized("invalid or expired bearer token");
  request.principal = principal;
  return principal;
}

/** A user (anonymous or OAuth) — not a worker — or 401/403. */
export async function requireUser(ctx: CloudContext, request: FastifyRequest): Promise<string> {
  const principal = await requirePrincipal(ctx, request);
  if (!principal.userId) throw forbidden("this route needs a user token, not a worker token");
  return principal.userId;
}

export async function requireWorker(ctx: CloudContext, request: FastifyRequest): Promise<void> {
  const principal = await requirePrincipal(ctx, request);
  if (principal.kind !== "worker") throw forbidden("this route needs a worker token");
}
