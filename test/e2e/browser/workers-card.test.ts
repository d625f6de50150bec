/**
 * Overview's Workers card in a real browser, on a real studio and cloud with a real `svc worker` process: the empty
 * state before any worker links, the worker with its state, this machine's CPU and its llama.cpp device (the CPU, and
 * why not a GPU) once it does, uploading a job's adapter while a proxy answers the upload with the cloud's 507, and
 * gone once it stops. Screenshots: test-results/screenshots/studio-overview-workers-*.png.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Page } from "playwright-core";
import { newAccount } from "../../support/api.js";
import { cliPath, repoRoot } from "../../support/cloud.js";
import { FaultProxy } from "../../support/faultProxy.js";
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
  /** Between the worker and the cloud, so that a test can hold its upload. */
  let proxy: FaultProxy & { port: number };

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 0 }), launchChromium()]);
    proxy = await FaultProxy.start(Number(new URL(stack.cloud.cloudUrl).port));
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    worker?.kill("SIGKILL");
    await workerExited;
    await proxy?.close();
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

  it("shows a linked worker idle with this machine's CPU and its llama.cpp device, uploading, then gone once it stops", async () => {
    const token = readFileSync(path.join(stack.cloud.dataDir, "worker-token"), "utf8").trim();
    const cloudUrl = `http://127.0.0.1:${proxy.port}`;
    worker = spawn(
      process.execPath,
      [cliPath, "worker", "--cloud", cloudUrl, "--name", "card-worker", "--work-dir", path.join(stack.tmp.path, "worker"), "--backend", "tfjs"],
      // A GPU is allowed: this machine has none, so llama.cpp runs on the CPU and the card says why.
      { env: { ...process.env, SVC_WORKER_TOKEN: token, SVC_LLAMA_GPU: "auto" }, stdio: "ignore" },
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
    // Reported once the worker's llama.cpp runtime loaded, after its hello.
    const llama = row.getByTestId("worker-llama");
    await llama.waitFor({ timeout: 30_000 });
    assert.equal(await llama.textContent(), "llama.cpp: cpu");
    assert.equal(await llama.getAttribute("title"), "On the CPU: no CUDA, Vulkan or Metal driver found on this machine");
    await screenshotBothThemes(page, "overview-workers-idle");

    // The cloud refuses the final adapter until the card has shown the worker uploading it.
    proxy.arm({
      persistent: true,
      match: (line) => line.startsWith("PUT /v1/worker/jobs/") && /name=adapter/.test(line),
      fire: ({ storageFullForTest }) => storageFullForTest(),
    });
    const { client } = await newAccount(stack.cloud);
    const train = await client.uploadDataset("train.jsonl", readFileSync(path.join(repoRoot, "examples/quickstart/data/train.jsonl"), "utf8"));
    const job = await client.createJob({
      name: "card-upload",
      datasetId: train.id,
      config: { model: "svc-tiny", maxSteps: 4, learningRate: 3e-3, batchSize: 2, seed: 9 },
    });
    const uploading = page.getByTestId("workers").locator('li[data-state="uploading"]');
    await uploading.waitFor({ timeout: 90_000 });
    assert.equal(await uploading.getByTestId("worker-state").textContent(), `uploading ${job.id}`);
    await screenshotBothThemes(page, "overview-workers-uploading");
    proxy.disarm();
    await page.getByTestId("workers").locator('li[data-state="idle"]').waitFor({ timeout: 90_000 });
    assert.equal((await client.getJob(job.id)).status, "completed");

    worker.kill("SIGTERM");
    await workerExited;
    await page.getByTestId("workers").locator('li[data-state="gone"]').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId("workers").getByTestId("worker-state").textContent(), "gone");
    await screenshotBothThemes(page, "overview-workers-gone");
    assert.deepEqual(consoleWatch.errors, []);
  });
});
