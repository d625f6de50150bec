/**
 * An endpoint on vLLM from the studio (issue 29 part 3): with a vLLM upstream that loads adapters registered, the
 * create-endpoint form offers it under "Served by"; the endpoint created there has the adapter loaded into the
 * server (`vllmStandIn`, a stand-in implementing vLLM's documented routes, reading the shared folder) and its page
 * says so. Real cloud, studio, training run and Chromium.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import type { Deployment, Job } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { startVllmStandIn, type VllmStandIn } from "../../support/vllmStandIn.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { startStudioStack, studioRequest, trainThroughStudio, type StudioStack } from "../../support/studioStack.js";

describe("studio: an endpoint served by a vLLM upstream (stand-in server)", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let standIn: VllmStandIn;
  let job: Job;
  let consoleWatch: ReturnType<typeof watchConsole>;

  before(async () => {
    [stack, browser, standIn] = await Promise.all([
      startStudioStack({ workers: 1, maxSteps: 2, saveSteps: 2, evalSteps: 2 }),
      launchChromium(),
      startVllmStandIn(),
    ]);
    page = browser.page;
    consoleWatch = watchConsole(page);
    job = await trainThroughStudio(stack.studio);
    const token = readFileSync(path.join(stack.cloud.dataDir, "worker-token"), "utf8").trim();
    const res = await fetch(`${stack.cloud.cloudUrl}/v1/models`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "gpu-box", upstreamUrl: standIn.url, loraDir: path.join(stack.tmp.path, "shared-lora") }),
    });
    assert.equal(res.status, 201, await res.text());
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await standIn?.stop();
  });

  it("offers the vLLM upstream under Served by, loads the adapter there, and the endpoint page says so", async () => {
    await openRoute(page, stack.studio.url, "#/endpoints");
    await page.locator("vscode-button", { hasText: "New endpoint" }).click();
    await page.locator('input[name="slug"]').fill("on-gpu-box");
    await pollUntil(async () => ((await page.getByLabel("Completed job").inputValue()) === job.id ? true : undefined), {
      timeoutMs: 10_000,
      description: "the job in the target picker",
    });
    const servedBy = page.getByLabel("Served by");
    assert.deepEqual(
      (await servedBy.locator("option").allTextContents()).map((t) => t.trim()),
      ["llama.cpp on this cloud", "vLLM gpu-box (loads the adapter at run time)"],
    );
    await servedBy.selectOption("gpu-box");
    await page.locator('vscode-button[type="submit"]').click();
    await page.waitForURL(/#\/endpoints\/[\w-]+$/);
    const deployment: Deployment = (await studioRequest(stack.studio, "GET", "/api/deployments")).json[0];
    assert.deepEqual(deployment.target, { kind: "adapter", jobId: job.id, baseModel: "gpu-box" });
    assert.ok(standIn.loras.has(`svc-${job.id}`), `loaded: ${standIn.calls.join(", ")}`);
    const servedOn = page.getByTestId("served-on");
    await servedOn.waitFor();
    assert.equal(
      await servedOn.textContent(),
      `Served by the upstream server ${standIn.url}; adapter svc-${job.id} loaded from ${path.join(stack.tmp.path, "shared-lora", `svc-${job.id}`)}`,
    );
    await screenshotBothThemes(page, "endpoint-on-vllm");
    assert.deepEqual(consoleWatch.errors, []);
  });
});
