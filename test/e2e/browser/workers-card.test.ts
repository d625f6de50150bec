/**
 * Overview's Workers card in a real browser, on a real studio and cloud with a real `svc worker` process: the empty
 * state before any worker links, the worker with its state and this machine's CPU once it does, and gone once it
 * stops. Screenshots: test-results/screenshots/studio-overview-workers-*.png.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { cliPath } from "../../support/cloud.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { startStudioStack, type StudioStack } from "../../support/studioStack.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";

describe("studio in the browser: Overview's Workers card", function () {
  this.timeout(180_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;
  let worker: ChildProcess | undefined;
  let workerExited: Promise<unknown> | undefined;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 0 }), launchChromium()]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    worker?.kill("SIGKILL");
    await workerExited;
    await browser?.close();
    await stack?.stop();
  });

  it("says no workers are connected before one links", async () => {
    await openRoute(page, stack.studio.url, "#/");
    const empty = page.getByTestId("workers-empty");
    await empty.waitFor();
    assert.equal(await empty.textContent(), "No workers connected. Jobs wait in the queue until one connects: run svc worker on a machine that trains.");
    await screenshotBothThemes(page, "overview-workers-empty");
  });

  it("shows a linked worker idle with this machine's CPU, then gone once it stops", async () => {
    const token = readFileSync(path.join(stack.cloud.dataDir, "worker-token"), "utf8").trim();
    worker = spawn(
      process.execPath,
      [cliPath, "worker", "--cloud", stack.cloud.cloudUrl, "--name", "card-worker", "--work-dir", path.join(stack.tmp.path, "worker"), "--backend", "tfjs"],
      { env: { ...process.env, SVC_WORKER_TOKEN: token }, stdio: "ignore" },
    );
    const child = worker;
    workerExited = new Promise((resolve) => child.on("exit", resolve));
    // The card polls every 5 s: the worker appears without a reload.
    const row = page.getByTestId("workers").locator('li[data-state="idle"]');
    await row.waitFor({ timeout: 30_000 });
    assert.match((await row.locator(".name").textContent())!, /^card-worker$/);
    assert.equal(await row.getByTestId("worker-state").textContent(), "idle");
    assert.match((await row.getByTestId("worker-devices").textContent())!, new RegExp(` × ${os.cpus().length} cores \\(\\d+(\\.\\d)? GiB\\)$`));
    assert.match((await row.locator(".detail").textContent())!, new RegExp(`^tfjs · ${os.hostname()}$`));
    assert.equal(await page.getByTestId("workers-empty").count(), 0);
    await screenshotBothThemes(page, "overview-workers-idle");

    worker.kill("SIGTERM");
    await workerExited;
    await page.getByTestId("workers").locator('li[data-state="gone"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId("workers").getByTestId("worker-state").textContent(), "gone");
    await screenshotBothThemes(page, "overview-workers-gone");
    assert.deepEqual(consoleWatch.errors, []);
  });
});
