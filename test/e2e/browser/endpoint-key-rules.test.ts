/**
 * Keys with rules from the studio (issue 28, "Done when"): a key issued on the endpoint page to
 * expire in an hour with a 30 RPM limit; a client (the `openai` package) uses it, its requests and
 * tokens appear in the key's row and the usage panel, and past the limit it gets OpenAI's 429.
 * Real browser, studio, cloud and edge (svc-tiny). Screenshots: test-results/screenshots/studio-endpoint-key-rules-*.png.
 */
import assert from "node:assert/strict";
import OpenAI from "openai";
import type { Page } from "playwright-core";
import type { Deployment } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes } from "./support/pages.js";
import { startStudioStack, studioRequest, type StudioStack } from "../../support/studioStack.js";

describe("studio endpoint: keys with expiry, limits and usage (issue 28)", function () {
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

  it("issues a key that expires in an hour with 30 RPM; its use shows and the 31st request gets a 429", async () => {
    const created = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "ruled-bot", target: { kind: "base_model", name: "svc-tiny" } },
    });
    assert.equal(created.status, 201, created.text);
    const deployment = created.json as Deployment;
    await openRoute(page, stack.studio.url, `#/endpoints/${deployment.id}`);

    await page.locator('input[name="label"]').fill("demo page");
    await page.locator('select[name="expires"]').selectOption({ label: "In 1 hour" });
    await page.locator('input[name="rpm"]').fill("30");
    await page.locator("vscode-button", { hasText: "Issue key" }).click();
    const plaintext = (await page.getByTestId("issued-key-plaintext").textContent())!.trim();
    const row = page.locator("tr[data-key-id]", { hasText: "demo page" });
    await row.getByTestId("key-rules").getByText("30 RPM").waitFor();
    assert.match((await row.getByTestId("key-rules").textContent()) ?? "", /expires in (59|60) min/);

    const client = new OpenAI({ baseURL: `${deployment.localUrl}/v1`, apiKey: plaintext, maxRetries: 0 });
    // One after another, as one client does (racing clients are cloud-key-limits.test.ts's; here the
    // inference queue's own 429 must not be what refuses them).
    const results: PromiseSettledResult<OpenAI.ChatCompletion>[] = [];
    for (let i = 0; i < 31; i++)
      results.push(...(await Promise.allSettled([client.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }], max_tokens: 1 })])));
    const served = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    assert.equal(served.length, 30);
    assert.equal(refused.length, 1);
    const err = refused[0].reason as InstanceType<typeof OpenAI.APIError>;
    assert.equal(err.status, 429);
    assert.equal(err.code, "rate_limit_exceeded");
    assert.ok(Number(err.headers?.get("retry-after")) >= 1);
    assert.equal(results.indexOf(refused[0]), 30, "the 31st is the one refused");
    const tokens = served.reduce((n, r) => n + (r as PromiseFulfilledResult<OpenAI.ChatCompletion>).value.usage!.total_tokens, 0);

    // The page refreshes itself every few seconds: the row's use and the usage panel catch up.
    await pollUntil(async () => ((await row.getByTestId("key-use").textContent()) ?? "").includes("30/30 requests this minute") || undefined, {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "the key's use to show 30/30",
    });
    const totals = page.getByTestId("usage-totals");
    await pollUntil(async () => (await totals.textContent())?.trim() === `31 requests, ${tokens.toLocaleString("en-US")} tokens` || undefined, {
      abortIf: () => undefined,
      timeoutMs: 30_000,
      intervalMs: 250,
      description: `the usage panel to count 31 requests and ${tokens} tokens`,
    });
    await row.scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "endpoint-key-rules");

    // Rotation with a grace: a new key with the same rules; the old one keeps working for now.
    await row.getByLabel("Rotate key demo page").click();
    await row.getByLabel("Grace period").selectOption({ label: "1 hour" });
    await row.getByTestId("rotate-confirm").click();
    await pollUntil(async () => ((await page.getByTestId("issued-key-plaintext").textContent())?.trim() !== plaintext ? true : undefined), {
      timeoutMs: 10_000,
      description: "the rotated key's plaintext",
    });
    const rotated = (await page.getByTestId("issued-key-plaintext").textContent())!.trim();
    assert.match(rotated, /^svc_live_/);
    const rows = page.locator("tr[data-key-id]", { hasText: "demo page" });
    await pollUntil(async () => ((await rows.count()) === 2 ? true : undefined), { timeoutMs: 10_000, description: "two demo page rows" });
    assert.match((await rows.nth(0).getByTestId("key-rules").textContent()) ?? "", /30 RPM/, "the new key has the old one's rules");
    assert.equal((await rows.nth(1).locator("td").nth(6).textContent())?.trim(), "rotated");
    const models = (key: string) => fetch(`${deployment.localUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal((await models(plaintext)).status, 200, "the old key works through its grace");
    assert.equal((await models(rotated)).status, 200);
    await screenshotBothThemes(page, "endpoint-key-rotated");
  });
});
