/**
 * POST /v1/oauth/device/approve: the owner approves a pending device sign-in from a terminal
 * (`svc login --approve CODE`, or `svc login` itself when it runs as the cloud's OS user). The
 * form carries the user code and its proof, an HMAC made with the key in the data dir; nothing
 * else approves, so reaching the port (a tunnel, a shared host) is not enough to sign in.
 *
 * It records on the device code what the provider records after a browser approval (account,
 * grant, scope), and the CLI polling the token endpoint receives its tokens as before. Answers
 * use the OAuth error format of the other device-flow endpoints.
 */
import { timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Provider } from "oidc-provider";
import type { CloudContext } from "../context.js";
import { OAUTH_CLIENT_ID } from "../../sdk/oauth.js";
import { normalizeUserCode, ownerApprovalProof } from "../../sdk/ownerApproval.js";
import { ensureLocalAccount } from "./localAccount.js";

const MAX_FORM_BYTES = 4096;

export async function approveAsOwner(ctx: CloudContext, provider: Provider, ownerKey: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await readForm(req);
  if (!form)
    return answer(res, 400, { error: "invalid_request", error_description: "send user_code and proof as application/x-www-form-urlencoded (at most 4 KiB)" });
  const userCode = form.get("user_code") ?? "";
  const proof = form.get("proof") ?? "";
  if (!userCode || !proof) return answer(res, 400, { error: "invalid_request", error_description: "user_code and proof are required" });
  // The proof is checked before the code is looked up, so nobody without the key learns which codes exist.
  if (!sameText(proof, ownerApprovalProof(ownerKey, userCode))) {
    return answer(res, 403, {
      error: "access_denied",
      error_description: "the proof was not made with this cloud's owner key; run `svc login --approve` as the user who runs the cloud",
    });
  }
  const code = await provider.DeviceCode.findByUserCode(normalizeUserCode(userCode), { ignoreExpiration: true });
  if (!code || code.clientId !== OAUTH_CLIENT_ID) return answer(res, 404, { error: "invalid_grant", error_description: "no sign-in request has that code" });
  if (code.isExpired) return answer(res, 400, { error: "expired_token", error_description: "that code has expired; run `svc login` again" });
  if (code.error || code.accountId || code.consumed) return answer(res, 409, { error: "invalid_grant", error_description: "that code was already used" });

  const account = await ensureLocalAccount(ctx);
  const scope = code.params?.scope ?? "openid";
  const grant = new provider.Grant({ accountId: account.userId, clientId: OAUTH_CLIENT_ID });
  grant.addOIDCScope(scope);
  Object.assign(code, { accountId: account.userId, grantId: await grant.save(), scope, authTime: Math.floor(Date.now() / 1000), inFlight: undefined });
  await code.save();
  answer(res, 200, { approved: true, user: account.name });
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(req.headers["content-type"] ?? "")) return null;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_FORM_BYTES) return null;
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  res.statusCode = status;
  res.setHeader("content-type", "application/json; charset=utf-8");
  res.setHeader("cache-control", "no-store");
  res.end(JSON.stringify(body));
}
