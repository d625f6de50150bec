/**
 * `svc login`, `svc whoami`, `svc logout` as child processes against a real cloud, with the sign-in
 * approved by the cloud's owner (`svc login --approve`) while `svc login` waits, and denied in
 * headless Chromium on the real /device pages.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { cliPath, startTestCloud, type TestCloud } from "../support/cloud.js";
import { http } from "../support/api.js";
import { launchChromium, type ChromiumSession } from "../support/chromium.js";
import { pollUntil } from "../support/poll.js";
import { spawnProcess, waitForExit, type ManagedProcess } from "../support/processes.js";
import { createTempDir, type TempDir } from "../support/tmp.js";
import type { Credentials } from "../../sdk/credentials.js";
import { MissingStateError } from "../../sdk/errors.js";
import { ProjectSession } from "../../sdk/session.js";

describe("svc login / whoami / logout (CLI processes, approved by the owner, denied in Chromium)", function () {
  this.timeout(90_000);
  let cloud: TestCloud;
  let browser: ChromiumSession;
  let home: TempDir;
  let project: TempDir;

  before(async () => {
    [cloud, browser] = await Promise.all([startTestCloud(), launchChromium({ viewport: { width: 800, height: 700 } })]);
  });
  after(async () => {
    await Promise.allSettled([cloud?.dispose(), browser?.close()]);
  });
  beforeEach(async () => {
    home = await createTempDir("cli-auth-home");
    project = await createTempDir("cli-auth-project");
  });
  afterEach(async () => {
    await Promise.all([home.remove(), project.remove()]);
  });

  const env = () => ({ ...process.env, SVC_HOME: home.path, SVC_CLOUD_URL: cloud.cloudUrl });
  const credentialsFile = () => path.join(home.path, "credentials.json");
  const readCredentialsFile = () => JSON.parse(readFileSync(credentialsFile(), "utf8")) as Credentials;
  const svc = (...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { encoding: "utf8", env: env(), cwd: project.path, timeout: 30_000 });
  const startLogin = (...args: string[]) => spawnProcess(process.execPath, [cliPath, "login", ...args], { env: env(), cwd: project.path, name: "svc login" });

  /** The code `svc login` printed, once it has printed it. */
  async function printedCode(login: ManagedProcess): Promise<{ url: string; code: string }> {
    return pollUntil(
      () => {
        const out = login.stdoutLines().join("\n");
        const url = /^\((http:\/\/\S+\/device) shows the request and can deny it; it cannot approve\.\)$/m.exec(out)?.[1];
        const code = /^\s+([A-Z]{4}-[A-Z]{4})$/m.exec(out)?.[1];
        const command = /^\s+svc login --approve ([A-Z]{4}-[A-Z]{4})$/m.exec(out)?.[1];
        return url && code && command === code ? { url, code } : undefined;
      },
      {
        timeoutMs: 20_000,
        description: "svc login to print the code and how to approve it",
        abortIf: () => (login.exitStatus() ? `svc login exited:\n${login.recentOutput()}` : undefined),
      },
    );
  }

  /** The cloud's owner: the OS user whose SVC_HOME holds the cloud's data dir (and its owner key). */
  const ownerEnv = () => ({ ...process.env, SVC_HOME: path.dirname(cloud.dataDir), SVC_CLOUD_URL: cloud.cloudUrl });
  const approveAsOwner = (code: string) =>
    spawnSync(process.execPath, [cliPath, "login", "--approve", code], { encoding: "utf8", env: ownerEnv(), cwd: project.path, timeout: 30_000 });

  function approveInTerminal(code: string): void {
    const result = approveAsOwner(code);
    assert.equal(result.status, 0, result.stderr);
    assert.match(result.stdout, new RegExp(`Approved the sign-in ${code} to ${cloud.cloudUrl} as ${os.userInfo().username}\\.`));
  }

  /** A person typing the printed code on the printed page and choosing Deny (the page has nothing else to choose). */
  async function denyInBrowser(url: string, code: string): Promise<Page> {
    const page = await browser.context.newPage();
    await page.goto(url);
    await page.getByRole("textbox").fill(code);
    await page.getByRole("button", { name: "Continue" }).click();
    await page.getByRole("heading", { name: "Approve sign-in?" }).waitFor();
    assert.equal(await page.locator("#user-code").textContent(), code, "the confirm page shows the code the terminal printed");
    assert.equal(await page.locator("#approve-command").textContent(), `svc login --approve ${code}`);
    assert.equal(await page.getByRole("button", { name: "Approve" }).count(), 0, "the page cannot approve");
    await page.getByRole("button", { name: "Deny" }).click();
    await page.getByRole("heading", { name: "Sign-in denied" }).waitFor();
    return page;
  }

  it("signs in while `svc login` waits and the owner approves, then whoami shows the OAuth user and logout signs out", async () => {
    const login = startLogin();
    const { url, code } = await printedCode(login);
    assert.equal(url, `${cloud.cloudUrl}/device`);
    approveInTerminal(code);
    const exit = await waitForExit(login, 30_000);
    assert.equal(exit.code, 0, login.recentOutput());
    assert.match(login.recentOutput(), new RegExp(`Signed in to ${cloud.cloudUrl} as ${os.userInfo().username} \\(OAuth user `));

    const credentials = readCredentialsFile();
    assert.equal(credentials.kind, "oauth");
    assert.equal(credentials.cloudUrl, cloud.cloudUrl);
    assert.equal(statSync(credentialsFile()).mode & 0o777, 0o600);
    if (credentials.kind !== "oauth") return;
    assert.ok(!login.recentOutput().includes(credentials.accessToken) && !login.recentOutput().includes(credentials.refreshToken), "tokens are never printed");

    // A project of the OAuth user, recorded by hand in the folder as SPEC.md section 2 asks.
    const created = await http(cloud, "POST", "/v1/projects", { token: credentials.accessToken, body: { name: "hand-made" } });
    assert.equal(created.status, 201, created.text);
    mkdirSync(path.join(project.path, ".svc"));
    const state = { orgSlug: created.body.orgSlug, projectSlug: created.body.slug, projectId: created.body.id };
    writeFileSync(path.join(project.path, ".svc", "state.json"), JSON.stringify(state));

    const whoami = svc("whoami");
    assert.equal(whoami.status, 0, whoami.stderr);
    assert.match(whoami.stdout, /^kind\s+oauth$/m);
    assert.match(whoami.stdout, new RegExp(`^user\\s+${os.userInfo().username} \\(`, "m"));
    assert.match(whoami.stdout, new RegExp(`^cloud\\s+${cloud.cloudUrl}$`, "m"));
    assert.ok(whoami.stdout.includes(`${state.orgSlug}/${state.projectSlug}  hand-made  (${state.projectId})`), whoami.stdout);
    assert.match(whoami.stdout, new RegExp(`^this folder\\s+${state.orgSlug}/${state.projectSlug}\\s+\\(${state.projectId}\\)$`, "m"));
    assert.ok(!whoami.stdout.includes(credentials.accessToken));

    const json = svc("whoami", "--json");
    assert.equal(json.status, 0, json.stderr);
    const report = JSON.parse(json.stdout);
    assert.equal(report.kind, "oauth");
    assert.deepEqual(report.folderProject, state);

    const logout = svc("logout");
    assert.equal(logout.status, 0, logout.stderr);
    assert.match(logout.stdout, /Signed out: deleted .*credentials\.json/);
    assert.match(logout.stdout, /revoked the OAuth tokens/);
    assert.equal(existsSync(credentialsFile()), false);
    assert.equal((await http(cloud, "GET", "/v1/me", { token: credentials.accessToken })).status, 401, "logout revoked the sign-in");

    const after = svc("whoami");
    assert.equal(after.status, 1);
    assert.match(after.stderr, /not signed in: run `svc login`/);
    const again = svc("logout");
    assert.equal(again.status, 0);
    assert.match(again.stdout, /Not signed in: there was no credentials file/);
  });

  it("with OAuth credentials and no .svc/state.json, requireScope() says how to write the file", async () => {
    const login = startLogin();
    const { code } = await printedCode(login);
    approveInTerminal(code);
    assert.equal((await waitForExit(login, 30_000)).code, 0, login.recentOutput());

    const previousHome = process.env.SVC_HOME;
    process.env.SVC_HOME = home.path;
    try {
      const session = await ProjectSession.open({ projectDir: project.path, mintAnonymous: false });
      assert.equal(session.credentialKind, "oauth");
      await assert.rejects(session.requireScope(), (err: Error) => {
        assert.ok(err instanceof MissingStateError, `expected MissingStateError, got ${err}`);
        assert.ok(err.message.includes(path.join(project.path, ".svc", "state.json")), err.message);
        assert.match(err.message, /write the file by hand/i);
        assert.match(err.message, /"orgSlug":"<org slug>","projectSlug":"<project slug>","projectId":"<project id>"/);
        assert.match(err.message, /svc whoami/);
        return true;
      });
      assert.equal(existsSync(path.join(project.path, ".svc")), false, "nothing was created for an OAuth user");
    } finally {
      if (previousHome === undefined) delete process.env.SVC_HOME;
      else process.env.SVC_HOME = previousHome;
    }
  });

  it("--no-wait prints the code and exits; a later `svc login` finishes that same sign-in", async () => {
    const first = svc("login", "--no-wait");
    assert.equal(first.status, 0, first.stderr);
    const code = /^\s+([A-Z]{4}-[A-Z]{4})$/m.exec(first.stdout)?.[1];
    assert.ok(code, first.stdout);
    assert.match(first.stdout, /run `svc login` again/);
    assert.equal(existsSync(credentialsFile()), false);
    assert.equal(statSync(path.join(home.path, "login-pending.json")).mode & 0o777, 0o600);

    approveInTerminal(code);
    const finish = svc("login");
    assert.equal(finish.status, 0, finish.stderr);
    assert.ok(finish.stdout.includes(code), "the same code is resumed, not a new one requested");
    assert.match(finish.stdout, /Signed in to/);
    assert.equal(readCredentialsFile().kind, "oauth");
    assert.equal(existsSync(path.join(home.path, "login-pending.json")), false);
  });

  it("fails cleanly when the sign-in is denied in the browser", async () => {
    const login = startLogin();
    const { url, code } = await printedCode(login);
    (await denyInBrowser(url, code)).close();
    const exit = await waitForExit(login, 30_000);
    assert.equal(exit.code, 1);
    assert.match(login.recentOutput(), /svc: the sign-in was denied in the browser/);
    assert.equal(existsSync(credentialsFile()), false);
  });

  it("run as the cloud's own OS user, `svc login` approves its own code with the owner key", async () => {
    const ownerHome = path.dirname(cloud.dataDir);
    const login = spawnProcess(process.execPath, [cliPath, "login"], { env: ownerEnv(), cwd: project.path, name: "svc login (owner)" });
    try {
      const exit = await waitForExit(login, 30_000);
      assert.equal(exit.code, 0, login.recentOutput());
      assert.match(login.recentOutput(), /approved as .*, the user who runs this cloud/);
      assert.doesNotMatch(login.recentOutput(), /svc login --approve/);
      const credentials = JSON.parse(readFileSync(path.join(ownerHome, "credentials.json"), "utf8")) as Credentials;
      assert.equal(credentials.kind, "oauth");
    } finally {
      await rm(path.join(ownerHome, "credentials.json"), { force: true });
    }
  });

  it("`svc login --approve` needs the cloud's owner key: another user's, or none, approves nothing", async () => {
    const login = startLogin();
    const { code } = await printedCode(login);

    // Another OS user of the same computer: their own SVC_HOME, with a cloud (and key) of their own.
    const someoneElse = svc("login", "--approve", code, "--data", path.join(home.path, "their-cloud"));
    assert.equal(someoneElse.status, 1);
    assert.match(someoneElse.stderr, /cannot read the cloud's owner key .*owner-approval\.key: run this as the user who runs the svc cloud/);
    mkdirSync(path.join(home.path, "their-cloud"));
    writeFileSync(path.join(home.path, "their-cloud", "owner-approval.key"), "a-key-of-another-cloud-0123456789\n", { mode: 0o600 });
    const wrongKey = svc("login", "--approve", code, "--data", path.join(home.path, "their-cloud"));
    assert.equal(wrongKey.status, 1);
    assert.match(wrongKey.stderr, new RegExp(`did not approve ${code}: the proof was not made with this cloud's owner key`));
    assert.equal(login.exitStatus(), undefined, "the sign-in is still waiting");

    approveInTerminal(code);
    assert.equal((await waitForExit(login, 30_000)).code, 0, login.recentOutput());
  });

  it("Ctrl-C while waiting cancels at once and saves nothing", async () => {
    const login = startLogin();
    await printedCode(login);
    await pollUntil(() => login.stdoutLines().some((line) => line.startsWith("Waiting for approval")), { timeoutMs: 10_000, description: "the waiting line" });
    process.kill(login.pid, "SIGINT");
    const exit = await waitForExit(login, 3_000);
    assert.equal(exit.code, 130);
    assert.match(login.recentOutput(), /sign-in cancelled; no credentials were saved/);
    assert.equal(existsSync(credentialsFile()), false);
  });

  it("prints help for each command", () => {
    for (const [command, expected] of [
      ["login", /--approve CODE/],
      ["logout", /credentials\.json/],
      ["whoami", /--json/],
    ] as const) {
      const result = svc(command, "--help");
      assert.equal(result.status, 0, result.stderr);
      assert.match(result.stdout, new RegExp(`^svc ${command}`));
      assert.match(result.stdout, expected);
    }
    const unknown = svc("login", "--bogus");
    assert.equal(unknown.status, 2);
    assert.match(unknown.stderr, /usage: svc login/);
  });
});
