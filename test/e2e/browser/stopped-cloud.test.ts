/**
 * Issue 31: the local cloud stopped and started again while the studio is open, in a real browser against the real
 * studio, the real daemon (`svc cloud start`, no SVC_CLOUD_URL) and the real CLI. Each test failed before its fix.
 * Screenshots go to test-results/screenshots/studio-stopped-cloud-*.png.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { createStudioServer, type StudioServer } from "../../../studio/index.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { freePort } from "../../support/ports.js";
import { pollUntil } from "../../support/poll.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { copyQuickstart, studioRequest } from "../../support/studioStack.js";
import { cliPath } from "../../support/cloud.js";

const START_HINT = "Is it running? Start it with `svc cloud start`.";

describe("studio in the browser: the local cloud stopped and started again (issue 31)", function () {
  this.timeout(180_000);
  let tmp: TempDir;
  let browser: ChromiumSession;
  let page: Page;
  let studio: StudioServer;
  let projectDir: string;
  let port: number;
  const saved = { SVC_HOME: process.env.SVC_HOME, SVC_CLOUD_URL: process.env.SVC_CLOUD_URL, SVC_WORKERS: process.env.SVC_WORKERS };

  const svc = (...args: string[]) => {
    const result = spawnSync(process.execPath, [cliPath, ...args], { cwd: projectDir, encoding: "utf8", env: process.env, timeout: 60_000 });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    return result.stdout;
  };
  const daemonUrl = () => (JSON.parse(readFileSync(path.join(tmp.path, "home", "cloud", "daemon.json"), "utf8")) as { cloudUrl: string }).cloudUrl;

  before(async () => {
    [tmp, browser] = await Promise.all([createTempDir("stopped-cloud"), launchChromium()]);
    page = browser.page;
    watchConsole(page);
    // The daemon as a user runs it: found through $SVC_HOME/cloud/daemon.json, not named by SVC_CLOUD_URL.
    process.env.SVC_HOME = path.join(tmp.path, "home");
    delete process.env.SVC_CLOUD_URL;
    process.env.SVC_WORKERS = "0"; // jobs stay queued: nothing here needs them trained
    projectDir = copyQuickstart(tmp.path);
    port = await freePort();
    const edgePort = await freePort();
    svc("cloud", "start", "--port", String(port), "--edge-port", String(edgePort));
    studio = await createStudioServer({ projectDir, host: "127.0.0.1", port: 0 });
    const credentials = await studioRequest(studio, "POST", "/api/credentials");
    assert.equal(credentials.json.cloudUrl, `http://127.0.0.1:${port}`);
    // An endpoint creates the project (`.svc/state.json`): with none, the lists ask the cloud nothing.
    const created = await studioRequest(studio, "POST", "/api/deployments", {
      body: { slug: "comes-back", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" },
    });
    assert.equal(created.status, 201, created.text);
  });
  after(async () => {
    await studio?.close();
    if (projectDir) spawnSync(process.execPath, [cliPath, "cloud", "stop"], { cwd: projectDir, env: process.env, timeout: 30_000 });
    await browser?.close();
    await tmp?.remove();
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  });

  it("views say `svc cloud start`; after it the Endpoints list recovers by itself, on the ports chosen before", async () => {
    await openRoute(page, studio.url, "#/endpoints");
    const row = page.getByRole("list", { name: "Endpoints" }).getByText("comes-back");
    await row.waitFor({ timeout: 30_000 });
    svc("cloud", "stop");

    await openRoute(page, studio.url, "#/jobs");
    await page.getByText(START_HINT, { exact: false }).first().waitFor({ timeout: 15_000 });
    await openRoute(page, studio.url, "#/endpoints");
    const alert = page.getByRole("alert");
    await alert.getByText(`Couldn't load endpoints: cannot reach the svc cloud at http://127.0.0.1:${port}`, { exact: false }).waitFor({ timeout: 15_000 });
    assert.match((await alert.textContent())!, /Start it with `svc cloud start`\.$/);
    await screenshotBothThemes(page, "stopped-cloud-endpoints");

    // No --port: the daemon comes back where the user put it, so the studio's credentials still reach it.
    const started = svc("cloud", "start");
    assert.match(started, new RegExp(`control plane http://127\\.0\\.0\\.1:${port}\\n`));
    // Without navigating away: the list retries and shows the endpoints, the error gone.
    await row.waitFor({ timeout: 5_000 });
    assert.equal(await page.getByRole("alert").count(), 0);
  });

  it("Run training with the cloud stopped starts it (on the URL the credentials name) and queues the job", async () => {
    svc("cloud", "stop");
    await openRoute(page, studio.url, "#/");
    await page.getByTestId("run-training-label").getByText("Run training: quickstart-json-answers").waitFor({ timeout: 60_000 });
    await page.locator("vscode-button", { hasText: "Run training" }).click();
    const consoleOutput = page.getByLabel("Training output");
    await consoleOutput.getByText(/job \S+ queued/).waitFor({ timeout: 60_000 });
    assert.equal(daemonUrl(), `http://127.0.0.1:${port}`);
    const stopped = await studioRequest(studio, "DELETE", "/api/train");
    assert.equal(stopped.status, 200, stopped.text);
    await pollUntil(async () => ((await studioRequest(studio, "GET", "/api/train")).json.running ? undefined : true), {
      timeoutMs: 30_000,
      description: "the run to end",
    });
  });
});
