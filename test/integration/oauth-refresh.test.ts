/**
 * One credential manager (issue 11 item 4): after an access token stops working, many requests at once (in one
 * process, and in two processes sharing ~/.svc) cause exactly one refresh, and the sign-in survives. Before, each
 * 401 refreshed on its own, replaying the refresh token the first refresh had rotated, and the cloud revoked the
 * sign-in as stolen.
 *
 * Refreshes are counted by a counting reverse proxy on loopback between the SDK and the real cloud (the SDK is
 * pointed at it through the credentials' cloudUrl); it forwards every request unchanged.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { writeCredentials, type OAuthCredentials } from "../../sdk/credentials.js";
import { ProjectSession } from "../../sdk/session.js";
import { startTestCloud, type TestCloud } from "../support/cloud.js";
import { refresh, signIn } from "../support/oauthFlow.js";
import { repoRoot } from "../support/cloud.js";

interface CountingProxy {
  url: string;
  refreshes: () => number;
  close: () => Promise<void>;
}

/** Forwards every request to `target` unchanged and counts refresh-token grants. */
async function countingProxy(target: string): Promise<CountingProxy> {
  let refreshes = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.url === "/v1/oauth/token" && new URLSearchParams(body.toString()).get("grant_type") === "refresh_token") refreshes += 1;
      const upstream = http.request(new URL(req.url!, target), { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode!, answer.headers);
        answer.pipe(res);
      });
      upstream.on("error", (err) => res.destroy(err));
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    refreshes: () => refreshes,
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

describe("OAuth refresh: one refresh however many requests meet an expired token", function () {
  this.timeout(60_000);
  let cloud: TestCloud;
  let proxy: CountingProxy;
  let home: string;
  const savedHome = process.env.SVC_HOME;

  before(async () => {
    cloud = await startTestCloud();
    proxy = await countingProxy(cloud.cloudUrl);
  });
  after(async () => {
    if (savedHome === undefined)
      delete process.env.SVC_HOME; // assigning undefined would store "undefined"
    else process.env.SVC_HOME = savedHome;
    await proxy?.close();
    await cloud?.dispose();
  });
  beforeEach(() => {
    home = mkdtempSync(path.join(os.tmpdir(), "svc-refresh-"));
    process.env.SVC_HOME = home;
  });
  afterEach(() => rmSync(home, { recursive: true, force: true }));

  /** Signs in for real, then stores credentials whose access token the cloud refuses (as after expiry). */
  async function refusedCredentials(expiresInMs = 3600_000): Promise<OAuthCredentials> {
    const tokens = await signIn(cloud);
    const credentials: OAuthCredentials = {
      kind: "oauth",
      cloudUrl: proxy.url,
      accessToken: "an-access-token-the-cloud-no-longer-accepts",
      refreshToken: tokens.refreshToken,
      expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
    };
    await writeCredentials(credentials);
    return credentials;
  }

  const stored = () => JSON.parse(readFileSync(path.join(home, "credentials.json"), "utf8")) as OAuthCredentials;

  /** The sign-in is still alive: the stored refresh token works (it was never replayed). */
  async function assertSignInAlive(): Promise<void> {
    const again = await refresh(cloud, stored().refreshToken);
    assert.equal(again.status, 200, `the sign-in was revoked: ${JSON.stringify(again.body)}`);
  }

  it("20 parallel requests in one process after a 401: all succeed, one refresh, the sign-in survives", async () => {
    await refusedCredentials();
    const before = proxy.refreshes();
    const session = await ProjectSession.open({ projectDir: home, mintAnonymous: false });
    const answers = await Promise.all(Array.from({ length: 20 }, () => session.client().me()));
    assert.ok(answers.every((me) => me.user.kind === "oauth"));
    assert.equal(proxy.refreshes() - before, 1);
    await assertSignInAlive();
  });

  it("refreshes ahead of expiresAt, before any request is refused", async () => {
    const tokens = await signIn(cloud);
    await writeCredentials({
      kind: "oauth",
      cloudUrl: proxy.url,
      accessToken: tokens.accessToken,
      refreshToken: tokens.refreshToken,
      expiresAt: new Date(Date.now() + 5_000).toISOString(),
    });
    const before = proxy.refreshes();
    const session = await ProjectSession.open({ projectDir: home, mintAnonymous: false });
    await session.client().me();
    assert.equal(proxy.refreshes() - before, 1, "the token that expires within a minute was refreshed first");
    assert.notEqual(stored().accessToken, tokens.accessToken);
    await assertSignInAlive();
  });

  it("two processes sharing the credentials file, 10 requests each: one refresh between them", async () => {
    await refusedCredentials();
    const before = proxy.refreshes();
    const script = `
      import { ProjectSession } from ${JSON.stringify(path.join(repoRoot, "sdk/session.ts"))};
      const session = await ProjectSession.open({ projectDir: process.env.SVC_HOME, mintAnonymous: false });
      const answers = await Promise.all(Array.from({ length: 10 }, () => session.client().me()));
      console.log(answers.filter((me) => me.user.kind === "oauth").length);
    `;
    const runOne = () =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
          env: { ...process.env, SVC_HOME: home },
          cwd: repoRoot,
        });
        let out = "";
        child.stdout.on("data", (c) => (out += c));
        child.stderr.on("data", (c) => (out += c));
        child.on("exit", (code) => resolve({ code, out }));
      });
    const results = await Promise.all([runOne(), runOne()]);
    for (const r of results) assert.deepEqual([r.code, r.out.trim()], [0, "10"], r.out);
    assert.equal(proxy.refreshes() - before, 1);
    await assertSignInAlive();
  });
});
