/**
 * The OAuth 2.0 device flow driven as `svc login` and the cloud's owner would: the token endpoints and the owner's
 * approval over real HTTP, and a small cookie-keeping fetch "browser" that posts the real /device pages' forms.
 */
import assert from "node:assert/strict";
import { OAUTH_CLIENT_ID, type DeviceCode } from "../../sdk/oauth.js";
import { ownerApprovalProof, readOwnerKey } from "../../sdk/ownerApproval.js";
import type { TestCloud } from "./cloud.js";

export const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export interface TokenBody {
  access_token?: string;
  refresh_token?: string;
  token_type?: string;
  expires_in?: number;
  error?: string;
  error_description?: string;
}

export async function postForm(
  cloud: TestCloud,
  route: string,
  form: Record<string, string>,
): Promise<{ status: number; body: TokenBody & Partial<DeviceCode>; headers: Headers }> {
  const response = await fetch(cloud.cloudUrl + route, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(form),
  });
  return { status: response.status, body: (await response.json()) as TokenBody & Partial<DeviceCode>, headers: response.headers };
}

export const requestDeviceCode = async (cloud: TestCloud): Promise<DeviceCode> => {
  const { status, body } = await postForm(cloud, "/v1/oauth/device/code", { client_id: OAUTH_CLIENT_ID, scope: "openid offline_access" });
  assert.equal(status, 200, JSON.stringify(body));
  return body as DeviceCode;
};

export const pollToken = (cloud: TestCloud, deviceCode: string) =>
  postForm(cloud, "/v1/oauth/token", { grant_type: DEVICE_GRANT, device_code: deviceCode, client_id: OAUTH_CLIENT_ID });

export const refresh = (cloud: TestCloud, refreshToken: string) =>
  postForm(cloud, "/v1/oauth/token", { grant_type: "refresh_token", refresh_token: refreshToken, client_id: OAUTH_CLIENT_ID });

/** A browser reduced to what the approval pages need: cookies, redirects and form posts. */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();

  constructor(private readonly baseUrl: string) {}

  async get(url: string): Promise<{ status: number; html: string; headers: Headers }> {
    return this.request(new URL(url, this.baseUrl).href, { method: "GET" });
  }

  /** Submits the page's form (its hidden inputs) plus `extra` fields, following redirects. */
  async submit(html: string, formId: string, extra: Record<string, string> = {}): Promise<{ status: number; html: string; headers: Headers }> {
    const form = new RegExp(`<form[^>]*id="${formId.replace(".", "\\.")}"[^>]*>([\\s\\S]*?)</form>`).exec(html);
    assert.ok(form, `no form #${formId} in:\n${html}`);
    const action = /action="([^"]+)"/.exec(form[0])?.[1];
    assert.ok(action, `form #${formId} has no action`);
    const fields: Record<string, string> = {};
    for (const input of form[1].matchAll(/<input\b[^>]*>/g)) {
      const name = /name="([^"]*)"/.exec(input[0])?.[1];
      if (name && /type="hidden"/.test(input[0])) fields[name] = decodeEntities(/value="([^"]*)"/.exec(input[0])?.[1] ?? "");
    }
    return this.request(new URL(decodeEntities(action), this.baseUrl).href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ ...fields, ...extra }).toString(),
    });
  }

  private async request(url: string, init: RequestInit, hops = 0): Promise<{ status: number; html: string; headers: Headers }> {
    assert.ok(hops < 10, "too many redirects");
    const cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
    const response = await fetch(url, { ...init, redirect: "manual", headers: { ...(init.headers as Record<string, string>), ...(cookie ? { cookie } : {}) } });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const [name, value] = [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)];
      if (value) this.cookies.set(name, value);
      else this.cookies.delete(name);
    }
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      return this.request(new URL(location, url).href, { method: "GET" }, hops + 1);
    }
    return { status: response.status, html: await response.text(), headers: response.headers };
  }
}

export function decodeEntities(text: string): string {
  return text
    .replace(/&#(\d+);/g, (_, code) => String.fromCharCode(Number(code)))
    .replace(/&quot;/g, '"')
    .replace(/&amp;/g, "&");
}

/** Opens the device page, enters the code and returns the confirm page. */
export async function openConfirmPage(cloud: TestCloud, userCode: string): Promise<{ browser: FormBrowser; html: string }> {
  const browser = new FormBrowser(cloud.cloudUrl);
  const entry = await browser.get("/device");
  assert.equal(entry.status, 200);
  assert.match(entry.html, /Enter the code/);
  const confirm = await browser.submit(entry.html, "op.deviceInputForm", { user_code: userCode.toLowerCase() });
  assert.equal(confirm.status, 200);
  return { browser, html: confirm.html };
}

/** The proof the cloud's owner makes with the key in the cloud's data dir (what `svc login --approve` sends). */
export async function ownerProof(cloud: TestCloud, userCode: string): Promise<string> {
  const key = await readOwnerKey(cloud.dataDir);
  assert.ok(key, `the cloud keeps an owner key in ${cloud.dataDir}`);
  return ownerApprovalProof(key, userCode);
}

export const postApproval = (cloud: TestCloud, userCode: string, proof: string) => postForm(cloud, "/v1/oauth/device/approve", { user_code: userCode, proof });

/** The owner approving the code from a terminal on the cloud's computer. */
export async function approve(cloud: TestCloud, userCode: string): Promise<void> {
  const { status, body } = await postApproval(cloud, userCode, await ownerProof(cloud, userCode));
  assert.equal(status, 200, JSON.stringify(body));
}

/** The whole flow, as `svc login` and the cloud's owner approving would run it. */
export async function signIn(cloud: TestCloud): Promise<{ accessToken: string; refreshToken: string }> {
  const code = await requestDeviceCode(cloud);
  await approve(cloud, code.user_code);
  const { status, body } = await pollToken(cloud, code.device_code);
  assert.equal(status, 200, JSON.stringify(body));
  assert.ok(body.access_token && body.refresh_token);
  return { accessToken: body.access_token, refreshToken: body.refresh_token };
}
