/**
 * Endpoint detail beyond the spec (issue 12): when each key was last used, and deleting an
 * endpoint behind a confirmation (its slug stays reserved). Real browser, real studio, real cloud
 * and edge (svc-tiny served by llama.cpp); no training worker is needed for a base-model endpoint.
 * Screenshots go to test-results/screenshots/studio-endpoint-*.png.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { CreatedDeploymentKey, Deployment } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes } from "./support/pages.js";
import { startStudioStack, studioRequest, type StudioStack } from "../../support/studioStack.js";

describe("studio endpoint detail: last use and delete (issue 12)", function () {
  this.timeout(120_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 0 }), launchChromium()]);
    page = browser.page;
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  async function createEndpoint(slug: string): Promise<Deployment> {
    const created = await studioRequest(stack.studio, "POST", "/api/deployments", { body: { slug, target: { kind: "base_model", name: "svc-tiny" } } });
    assert.equal(created.status, 201, created.text);
    return created.json as Deployment;
  }

  async function issueKey(deployment: Deployment, label: string): Promise<CreatedDeploymentKey> {
    const created = await studioRequest(stack.studio, "POST", `/api/deployments/${deployment.id}/keys`, { body: { label } });
    assert.equal(created.status, 201, created.text);
    return created.json as CreatedDeploymentKey;
  }

  it("shows when each key was last used: never, then after a call through the edge", async () => {
    const deployment = await createEndpoint("last-use-bot");
    const used = await issueKey(deployment, "used key");
    await issueKey(deployment, "idle key");
    await openRoute(page, stack.studio.url, `#/endpoints/${deployment.id}`);
    const lastUsed = (label: string) => page.locator("tr[data-key-id]", { hasText: label }).getByTestId("key-last-used");
    await lastUsed("used key").getByText("never used", { exact: true }).waitFor();

    const call = await fetch(`${deployment.localUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${used.key}`, "content-type": "application/json" },
      body: JSON.stringify({ model: deployment.slug, messages: [{ role: "user", content: "hi" }], max_tokens: 2 }),
    });
    assert.equal(call.status, 200, await call.text());

    // Best-effort and batched (SVC_EDGE_LAST_USED_FLUSH_MS, 1 s by default): reload until it shows.
    await pollUntil(
      async () => {
        await page.reload();
        return (await lastUsed("used key").textContent({ timeout: 5000 }))?.trim() === "used just now" ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250, description: "the key's last use to show" },
    );
    assert.equal((await lastUsed("idle key").textContent())?.trim(), "never used");
    assert.ok(await lastUsed("used key").getAttribute("title"), "the exact time is in the tooltip");
    await page.locator("tr[data-key-id]").first().scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "endpoint-keys-last-used");
  });

  it("deletes an endpoint after confirmation (Escape keeps it); the slug stays reserved", async () => {
    const deployment = await createEndpoint("doomed-bot");
    await openRoute(page, stack.studio.url, `#/endpoints/${deployment.id}`);
    const trigger = page.getByTestId("delete-endpoint");
    const confirm = page.getByTestId("delete-endpoint-confirm");
    await trigger.click();
    await confirm.waitFor();
    assert.match((await confirm.textContent()) ?? "", /Delete “doomed-bot”\? This cannot be undone\./);
    await confirm.scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "endpoint-delete-confirm");
    await page.keyboard.press("Escape");
    await confirm.waitFor({ state: "detached" });
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "delete-endpoint", "focus is back on Delete…");
    assert.equal((await studioRequest(stack.studio, "GET", `/api/deployments/${deployment.id}`)).status, 200, "kept");

    // Keyboard only: Enter asks with focus on "Delete endpoint", Enter confirms.
    await trigger.focus();
    await page.keyboard.press("Enter");
    await confirm.waitFor();
    await page.keyboard.press("Enter");
    const notice = page.getByTestId("endpoint-deleted");
    await notice.waitFor();
    assert.equal(await notice.textContent(), "Endpoint “doomed-bot” deleted. Its URL no longer answers and its keys no longer work. The slug stays reserved.");
    await screenshotBothThemes(page, "endpoint-deleted");
    assert.equal((await studioRequest(stack.studio, "GET", `/api/deployments/${deployment.id}`)).status, 404);
    const again = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "doomed-bot", target: { kind: "base_model", name: "svc-tiny" } },
    });
    assert.equal(again.status, 409);
    assert.match(again.text, /stays reserved/);

    await openRoute(page, stack.studio.url, "#/endpoints");
    await page.locator("vscode-button", { hasText: "New endpoint" }).waitFor();
    assert.equal(await page.locator(`li[data-deployment-id="${deployment.id}"]`).count(), 0, "gone from the list");
  });
});
