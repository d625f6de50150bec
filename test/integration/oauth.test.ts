/**
 * The OAuth 2.0 device flow (RFC 8628) of a real cloud process over real HTTP: the CLI side talks
 * to the token endpoints, the owner approves with the key in the cloud's data dir, and a small
 * cookie-keeping fetch "browser" drives the real /device pages (code entry, confirm, denied)
 * exactly as a person's browser would post them.
 */
import assert from "node:assert/strict";
import { statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { http } from "../support/api.js";
import { OAUTH_CLIENT_ID } from "../../sdk/oauth.js";
import { ownerApprovalProof, ownerKeyPath } from "../../sdk/ownerApproval.js";
import {
  approve,
  DEVICE_GRANT,
  FormBrowser,
  openConfirmPage,
  ownerProof,
  pollToken,
  postApproval,
  postForm,
  refresh,
  requestDeviceCode,
  signIn,
} from "../support/oauthFlow.js";
import { pollUntil } from "../support/poll.js";

const me = (cloud: TestCloud, token: string) => http(cloud, "GET", "/v1/me", { token });

describe("OAuth device flow (real cloud process)", function () {
  this.timeout(60_000);
  let cloud: TestCloud;

  before(async () => {
    cloud = await startTestCloud();
  });
  after(async () => {
    await cloud?.dispose();
  });

  it("issues a device code that points at the cloud's /device page", async () => {
    const code = await requestDeviceCode(cloud);
    assert.equal(code.verification_uri, `${cloud.cloudUrl}/device`);
    assert.equal(code.verification_uri_complete, `${cloud.cloudUrl}/device?user_code=${code.user_code}`);
    assert.match(code.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(code.expires_in, 600);
    assert.equal(code.interval, 5);
    assert.ok(code.device_code.length >= 32);
  });

  it("signs in: pending until the owner approves with the data dir's key, then tokens that work on /v1/me", async () => {
    const code = await requestDeviceCode(cloud);
    const pending = await pollToken(cloud, code.device_code);
    assert.equal(pending.status, 400);
    // The RFC 6749 error format device-flow clients expect, not our {"error":{...}} envelope.
    assert.equal(pending.body.error, "authorization_pending");

    const { html } = await openConfirmPage(cloud, code.user_code);
    assert.ok(html.includes(code.user_code), "the confirm page shows the user code");
    assert.ok(html.includes(os.userInfo().username), "the confirm page names the local user who approves");
    assert.ok(html.includes(`svc login --approve ${code.user_code}`), "the confirm page says how the owner approves");
    assert.match(html, /Deny/);
    assert.doesNotMatch(html, />Approve</, "the page has no Approve button");

    const keyFile = ownerKeyPath(cloud.dataDir);
    assert.equal(statSync(keyFile).mode & 0o777, 0o600, "only the cloud's OS user can read the owner key");
    await approve(cloud, code.user_code.toLowerCase());

    const granted = await pollToken(cloud, code.device_code);
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    assert.equal(granted.body.token_type, "Bearer");
    assert.equal(granted.body.expires_in, 3600);
    assert.ok(granted.body.access_token && granted.body.refresh_token);

    const who = await me(cloud, granted.body.access_token);
    assert.equal(who.status, 200, who.text);
    assert.equal(who.body.user.kind, "oauth");
    assert.equal(who.body.user.name, os.userInfo().username);
    assert.equal(who.body.orgs.length, 1);

    // A device code is good for one exchange only.
    const again = await pollToken(cloud, code.device_code);
    assert.equal(again.status, 400);
    assert.equal(again.body.error, "invalid_grant");
    const approvedTwice = await postApproval(cloud, code.user_code, await ownerProof(cloud, code.user_code));
    assert.notEqual(approvedTwice.status, 200, "a used code cannot be approved again");
  });

  it("a browser that confirms on the page does not sign in: only the owner's approval does", async () => {
    const code = await requestDeviceCode(cloud);
    const { browser, html } = await openConfirmPage(cloud, code.user_code);
    // What the page's form posts when confirmed (the provider's hidden confirm field), as anyone reaching the port could send it.
    const confirmed = await browser.submit(html, "op.deviceConfirmForm");
    assert.equal(confirmed.status, 403, confirmed.html);
    assert.match(confirmed.html, /This page cannot approve a sign-in/);
    assert.doesNotMatch(confirmed.html, /Signed in/);
    assert.equal((await pollToken(cloud, code.device_code)).body.error, "authorization_pending");

    // The owner can still approve that code afterwards.
    await approve(cloud, code.user_code);
    assert.equal((await pollToken(cloud, code.device_code)).status, 200);
  });

  it("refuses an approval without the owner key's proof, and never says whether the code exists", async () => {
    const code = await requestDeviceCode(cloud);
    const otherKey = ownerApprovalProof("a-key-of-another-cloud-0123456789", code.user_code);
    const forged = await postApproval(cloud, code.user_code, otherKey);
    assert.equal(forged.status, 403);
    assert.equal(forged.body.error, "access_denied");
    // A proof for one code approves no other code.
    const other = await requestDeviceCode(cloud);
    assert.equal((await postApproval(cloud, code.user_code, await ownerProof(cloud, other.user_code))).status, 403);
    assert.equal((await postApproval(cloud, "BCDF-GHJK", otherKey)).status, 403, "an unknown code gets the same answer as a known one");
    const missing = await postForm(cloud, "/v1/oauth/device/approve", { user_code: code.user_code });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.error, "invalid_request");
    assert.equal((await pollToken(cloud, code.device_code)).body.error, "authorization_pending");
    const unknown = await postApproval(cloud, "BCDF-GHJK", await ownerProof(cloud, "BCDF-GHJK"));
    assert.equal(unknown.status, 404);
  });

  it("reuses the one local OAuth user for every approval", async () => {
    const first = await signIn(cloud);
    const second = await signIn(cloud);
    const [a, b] = await Promise.all([me(cloud, first.accessToken), me(cloud, second.accessToken)]);
    assert.equal(a.body.user.id, b.body.user.id);
    assert.deepEqual(a.body.orgs, b.body.orgs);
  });

  it("refreshes: the new access token works and the refresh token rotates", async () => {
    const tokens = await signIn(cloud);
    const refreshed = await refresh(cloud, tokens.refreshToken);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.ok(refreshed.body.access_token && refreshed.body.refresh_token);
    assert.notEqual(refreshed.body.access_token, tokens.accessToken);
    assert.notEqual(refreshed.body.refresh_token, tokens.refreshToken, "public clients get a new refresh token each time");
    const who = await me(cloud, refreshed.body.access_token);
    assert.equal(who.status, 200, who.text);
    assert.equal(who.body.user.kind, "oauth");

    // Replaying a rotated refresh token is treated as theft: the whole sign-in is revoked.
    const replay = await refresh(cloud, tokens.refreshToken);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, "invalid_grant");
    assert.equal((await me(cloud, refreshed.body.access_token)).status, 401);
    assert.equal((await refresh(cloud, refreshed.body.refresh_token!)).body.error, "invalid_grant");
  });

  it("denying on the page gives the polling client access_denied", async () => {
    const code = await requestDeviceCode(cloud);
    const { browser, html } = await openConfirmPage(cloud, code.user_code);
    const denied = await browser.submit(html, "op.deviceConfirmForm", { abort: "yes" });
    assert.equal(denied.status, 200);
    assert.match(denied.html, /Sign-in denied/);
    const { status, body } = await pollToken(cloud, code.device_code);
    assert.equal(status, 400);
    assert.equal(body.error, "access_denied");
    // The denied code cannot be approved afterwards.
    const retry = await openConfirmPage(cloud, code.user_code);
    assert.match(retry.html, /already used/);
  });

  it("rejects unknown user codes, device codes, clients and grant types", async () => {
    const { html } = await openConfirmPage(cloud, "BCDF-GHJK");
    assert.match(html, /No sign-in request has that code/);
    assert.doesNotMatch(html, /Approve sign-in\?/);

    const unknownDevice = await pollToken(cloud, "not-a-device-code-at-all-0123456789");
    assert.equal(unknownDevice.status, 400);
    assert.equal(unknownDevice.body.error, "invalid_grant");

    const unknownClient = await postForm(cloud, "/v1/oauth/device/code", { client_id: "someone-else" });
    assert.equal(unknownClient.status, 401);
    assert.equal(unknownClient.body.error, "invalid_client");

    const code = await requestDeviceCode(cloud);
    const wrongClient = await postForm(cloud, "/v1/oauth/token", { grant_type: DEVICE_GRANT, device_code: code.device_code, client_id: "someone-else" });
    assert.equal(wrongClient.body.error, "invalid_client");

    const password = await postForm(cloud, "/v1/oauth/token", { grant_type: "password", username: "a", password: "b", client_id: OAUTH_CLIENT_ID });
    assert.equal(password.status, 400);
    assert.match(password.body.error ?? "", /^(unsupported_grant_type|unauthorized_client)$/);

    const missing = await postForm(cloud, "/v1/oauth/token", { grant_type: DEVICE_GRANT, client_id: OAUTH_CLIENT_ID });
    assert.equal(missing.body.error, "invalid_request");

    // Garbage bearer tokens are plain 401s in our envelope on the API.
    const api = await me(cloud, "definitely-not-a-token-0123456789");
    assert.equal(api.status, 401);
    assert.equal(api.body.error.code, "unauthorized");
  });

  it("rejects an expired device code on the page and at the token endpoint", async function () {
    if (process.env.SVC_TEST_DATABASE_URL) this.skip(); // ages the row in the SQLite file directly
    const code = await requestDeviceCode(cloud);
    await ageDeviceCode(cloud, code.device_code);
    const { html } = await openConfirmPage(cloud, code.user_code);
    assert.match(html, /expired/);
    const late = await postApproval(cloud, code.user_code, await ownerProof(cloud, code.user_code));
    assert.equal(late.status, 400);
    assert.equal(late.body.error, "expired_token");
    const { status, body } = await pollToken(cloud, code.device_code);
    assert.equal(status, 400);
    assert.equal(body.error, "expired_token");
  });

  it("serves the approval pages with no external assets and no framing", async () => {
    const page = await new FormBrowser(cloud.cloudUrl).get("/device");
    assert.match(page.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
    assert.equal(page.headers.get("x-frame-options"), "DENY");
    assert.doesNotMatch(page.html, /(src|href)="https?:|@import|url\(/);
    assert.equal(cloud.stderr(), "", "the cloud printed nothing (no oidc-provider runtime or default-hook notices)");
  });
});

describe("OAuth tokens across a cloud restart", function () {
  this.timeout(60_000);
  let cloud: TestCloud | undefined;

  after(async () => {
    await cloud?.dispose();
  });

  it("keeps access and refresh tokens valid after a restart", async () => {
    const first = await startTestCloud();
    cloud = first;
    const tokens = await signIn(first);
    const before = await me(first, tokens.accessToken);
    assert.equal(before.status, 200);
    await first.stop();

    const again = await first.restart();
    cloud = again;
    await pollUntil(async () => (await fetch(`${again.cloudUrl}/readyz`)).ok, { timeoutMs: 20_000, description: "the restarted cloud's /readyz" });
    const after = await me(again, tokens.accessToken);
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.user.id, before.body.user.id);

    const refreshed = await refresh(again, tokens.refreshToken);
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal((await me(again, refreshed.body.access_token!)).status, 200);

    const keys = path.join(again.dataDir, "oauth-keys.json");
    assert.equal(statSync(keys).mode & 0o777, 0o600, "the provider's keys are private to the user");
  });
});

/** Moves a device code's expiry into the past, in the payload (checked by the provider) and its row. */
async function ageDeviceCode(cloud: TestCloud, deviceCode: string): Promise<void> {
  const { default: SQLite } = await import("better-sqlite3");
  const db = new SQLite(path.join(cloud.dataDir, "svc.db"));
  try {
    db.pragma("busy_timeout = 5000");
    const past = Math.floor(Date.now() / 1000) - 60;
    const changed = db
      .prepare("UPDATE oauth_payloads SET payload = json_set(payload, '$.exp', ?), expires_at = ? WHERE kind = 'DeviceCode' AND id = ?")
      .run(past, new Date(past * 1000).toISOString(), deviceCode).changes;
    assert.equal(changed, 1, "the device code row exists");
  } finally {
    db.close();
  }
}
