/** Client side of the OAuth 2.0 device authorization grant (RFC 8628) against the svc cloud. */
import type { OAuthCredentials } from "./credentials.js";

export const OAUTH_CLIENT_ID = "svc-cli";
const OAUTH_TIMEOUT_MS = 30_000;

export interface DeviceCode {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
}

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  token_type: string;
}

async function postForm<T>(url: string, form: Record<string, string>): Promise<{ status: number; body: T & { error?: string; error_description?: string } }> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
    // A token endpoint that never answers must not hang `svc login` or every request waiting on a refresh.
    signal: AbortSignal.timeout(OAUTH_TIMEOUT_MS),
  }).catch((err: Error) => {
    throw new Error(err.name === "TimeoutError" ? `${url} did not answer within ${OAUTH_TIMEOUT_MS / 1000} s` : `cannot reach ${url}: ${err.message}`);
  });
  return { status: response.status, body: await response.json() };
}

export async function requestDeviceCode(cloudUrl: string): Promise<DeviceCode> {
  const { status, body } = await postForm<DeviceCode>(`${cloudUrl}/v1/oauth/device/code`, { client_id: OAUTH_CLIENT_ID, scope: "openid offline_access" });
  if (status !== 200) throw new Error(`device authorization failed: ${body.error_description ?? body.error ?? status}`);
  return body;
}

export type OwnerApproval = { approved: true; user: string } | { approved: false; status: number; message: string };

/** Approves a pending device code as the cloud's owner, with a proof made from its owner key (sdk/ownerApproval.ts). */
export async function approveDeviceCode(cloudUrl: string, userCode: string, proof: string): Promise<OwnerApproval> {
  const { status, body } = await postForm<{ user: string }>(`${cloudUrl}/v1/oauth/device/approve`, { user_code: userCode, proof });
  if (status === 200) return { approved: true, user: body.user };
  return { approved: false, status, message: body.error_description ?? body.error ?? `HTTP ${status}` };
}

/** Polls the token endpoint until the user approves, denies, or the code expires. */
export async function pollDeviceToken(cloudUrl: string, code: DeviceCode, signal?: AbortSignal): Promise<OAuthCredentials> {
  let interval = (code.interval ?? 5) * 1000;
  const deadline = Date.now() + code.expires_in * 1000;
  while (Date.now() < deadline) {
    signal?.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, interval));
    const { status, body } = await postForm<TokenResponse>(`${cloudUrl}/v1/oauth/token`, {
      grant_type: "urn:ietf:params:oauth:grant-type:device_code",
      device_code: code.device_code,
      client_id: OAUTH_CLIENT_ID,
    });
    if (status === 200) return toCredentials(cloudUrl, body);
    if (body.error === "authorization_pending") continue;
    if (body.error === "slow_down") {
      interval += 5000;
      continue;
    }
    if (body.error === "access_denied") throw new Error("the sign-in was denied in the browser");
    if (body.error === "expired_token") break;
    throw new Error(`sign-in failed: ${body.error_description ?? body.error ?? `HTTP ${status}`}`);
  }
  throw new Error("the sign-in code expired before it was approved; run `svc login` again");
}

export async function refreshOAuthTokens(credentials: OAuthCredentials): Promise<OAuthCredentials | null> {
  const { status, body } = await postForm<TokenResponse>(`${credentials.cloudUrl}/v1/oauth/token`, {
    grant_type: "refresh_token",
    refresh_token: credentials.refreshToken,
    client_id: OAUTH_CLIENT_ID,
  });
  if (status !== 200) return null;
  return toCredentials(credentials.cloudUrl, { ...body, refresh_token: body.refresh_token ?? credentials.refreshToken });
}

function toCredentials(cloudUrl: string, body: TokenResponse): OAuthCredentials {
  return {
    kind: "oauth",
    cloudUrl,
    accessToken: body.access_token,
    refreshToken: body.refresh_token ?? "",
    expiresAt: new Date(Date.now() + body.expires_in * 1000).toISOString(),
  };
}
