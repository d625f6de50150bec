/**
 * Small UI defects of issue 12 item 10, each in a real browser (playwright-core + Debian
 * Chromium) against the real studio and a real cloud. No training worker: the test drives the
 * worker link itself (test/support/worker.ts), so a job shows exactly the events
 * the test sends. Screenshots go to test-results/screenshots/studio-details-*.png.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { CloudMessage } from "../../../cloud/workers/protocol.js";
import type { Deployment } from "../../../sdk/wire.js";
import { TestWorker } from "../../support/worker.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { openRoute, screenshotBothThemes } from "./support/pages.js";
import { projectClient, startStudioStack, studioRequest, type StudioStack } from "../../support/studioStack.js";

type Assign = Extract<CloudMessage, { type: "assign" }>;

describe("studio UI details (issue 12 item 10)", function () {
  this.timeout(120_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let deployment: Deployment;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 0 }), launchChromium()]);
    page = browser.page;
    // Creating an endpoint through the studio also creates the project state the job below needs.
    const created = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "details-bot", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" },
    });
    assert.equal(created.status, 201, created.text);
    deployment = created.json;
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("a disabled vscode-button exposes aria-disabled", async () => {
    await page.goto(`${stack.studio.url}/#/playground`);
    const clear = page.locator("vscode-button", { hasText: "Clear chat" });
    await clear.waitFor();
    // Nothing to clear yet: disabled, and assistive technology is told so.
    assert.equal(await clear.getAttribute("aria-disabled"), "true");
    assert.equal(await page.getByRole("button", { name: "Clear chat", disabled: true }).count(), 1);
  });

  it("draws a one-point loss series as a marker", async () => {
    const job = await projectClient(stack).createJob({ name: "one-point", config: { maxSteps: 1 } });
    const worker = await TestWorker.connect(stack.cloud, "w-one-point");
    try {
      worker.send({ type: "ready" });
      await worker.next((m): m is Assign => m.type === "assign" && m.job.id === job.id);
      await worker.emit(job.id, 1, "training.started", { model: "svc-tiny" });
      await worker.emit(job.id, 2, "training.log", { step: 1, loss: 2.5 });
      await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
      const marker = page.locator('circle[data-series="loss"]');
      await marker.waitFor();
      assert.equal(await marker.count(), 1);
      await screenshotBothThemes(page, "details-one-point");
    } finally {
      worker.close();
    }
  });

  it("an unknown job id shows one banner, not three", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    const events = page.waitForResponse((r) => r.url().includes(`/api/jobs/${missing}/events`));
    const job = page.waitForResponse((r) => r.url().endsWith(`/api/jobs/${missing}`));
    await openRoute(page, stack.studio.url, `#/jobs/${missing}`);
    await Promise.all([events, job]);
    await page.getByText(/Couldn't load job/).waitFor();
    // Let the EventSource's error event (fired after its 404) reach the page before counting.
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    assert.equal(
      await page.locator(".banner").count(),
      1,
      await page
        .locator(".banner")
        .allTextContents()
        .then((t) => t.join(" | ")),
    );
    await screenshotBothThemes(page, "details-unknown-job");
  });

  it("keeps focus on the Enabled switch and the Auth mode select after saving", async () => {
    await openRoute(page, stack.studio.url, `#/endpoints/${deployment.id}`);
    const toggle = page.getByRole("switch", { name: "Enabled" });
    await toggle.waitFor();
    await toggle.focus();
    const patched = page.waitForResponse((r) => r.request().method() === "PATCH");
    await page.keyboard.press("Space");
    await patched;
    await page.waitForFunction(() => document.querySelector('[role="switch"]')?.getAttribute("aria-checked") === "false");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("role")), "switch");

    const select = page.getByTestId("auth-mode");
    const patchedAuth = page.waitForResponse((r) => r.request().method() === "PATCH");
    // selectOption does not move focus; a keyboard user is on the select when changing it.
    await select.focus();
    await select.selectOption("none");
    await patchedAuth;
    await page.waitForFunction(() => {
      const el = document.querySelector<HTMLSelectElement>('[data-testid="auth-mode"]');
      return el !== null && !el.disabled && el.getAttribute("aria-disabled") !== "true";
    });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "auth-mode");
    await screenshotBothThemes(page, "details-endpoint-focus");
  });
});
