/**
 * Keys with rules from the studio (issue 28, "Done when"): a key issued on the endpoint page to
 * expire in an hour with a 30 RPM limit; a client (the `openai` package) uses it, its requests and
 * tokens appear in the key's row and the usage panel (with its 429, latency and time to first token, over each
 * range, exported as CSV), past the limit it gets OpenAI's 429, and after its expiry (moved by a change of its
 * rules) a 401 `expired`.
 * Real browser, studio, cloud and edge (svc-tiny). Screenshots: test-results/screenshots/studio-endpoint-key-rules-*.png.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
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

    // The panel's detail: the refusal by status, latency and time to first token, per key; other ranges count the same.
    const panel = page.getByTestId("key-usage");
    const keyId = (await row.getAttribute("data-key-id"))!;
    const perKey = panel.locator(`tr[data-usage-key-id="${keyId}"]`);
    await pollUntil(async () => ((await perKey.getByTestId("usage-errors").textContent())?.trim() === "429 ×1" ? true : undefined), {
      timeoutMs: 30_000,
      intervalMs: 250,
      description: "the key's 429 in the usage panel",
    });
    assert.match((await perKey.textContent()) ?? "", /demo page.*31.*429 ×1\s*[\d,]+ \/ [\d,]+ ms\s*[\d,]+ \/ [\d,]+ ms/s);
    assert.match((await panel.getByTestId("usage-quality").textContent()) ?? "", /Errors: 429 ×1 · latency p50 \/ p95: [\d,]+ \/ [\d,]+ ms/);
    const tallest = async () =>
      (
        await panel
          .getByTestId("usage-chart-requests")
          .locator("rect")
          .evaluateAll((rects) => rects.map((r) => Number(r.getAttribute("height"))))
      ).filter((h) => h > 0).length;
    assert.ok((await tallest()) >= 1, "the requests chart has a bar");
    for (const label of ["Last 30 days", "Last day", "Last hour"]) {
      await panel.getByRole("button", { name: label }).click();
      await pollUntil(async () => (await panel.getByRole("button", { name: label }).getAttribute("aria-pressed")) === "true" || undefined, {
        timeoutMs: 5000,
        description: `${label} pressed`,
      });
      await pollUntil(async () => (await totals.textContent())?.trim() === `31 requests, ${tokens.toLocaleString("en-US")} tokens` || undefined, {
        timeoutMs: 10_000,
        intervalMs: 250,
        description: `${label}: 31 requests`,
      });
      assert.match(
        (await panel.locator("figcaption").first().textContent()) ?? "",
        label === "Last 30 days" ? /per day/ : label === "Last day" ? /per 15 minutes/ : /per minute/,
      );
    }
    const [csv] = await Promise.all([page.waitForEvent("download"), panel.locator("vscode-button", { hasText: "Export CSV" }).click()]);
    assert.equal(csv.suggestedFilename(), "usage-ruled-bot-hour.csv");
    const csvText = await readFile((await csv.path())!, "utf8");
    const keyLines = csvText
      .trim()
      .split("\n")
      .filter((line) => line.split(",")[1] === keyId);
    assert.equal(
      keyLines.reduce((n, line) => n + Number(line.split(",")[3]), 0),
      31,
    );
    assert.ok(
      keyLines.some((line) => line.split(",")[5] === "429:1"),
      csvText,
    );
    await panel.scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "endpoint-usage-panel");

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

    // After its expiry (moved to now by a change of its rules, not waited for): OpenAI's 401 `expired`, and the row says so.
    const rotatedId = (await rows.nth(0).getAttribute("data-key-id"))!;
    const changed = await studioRequest(stack.studio, "PATCH", `/api/deployments/${deployment.id}/keys/${rotatedId}`, {
      body: { expiresAt: new Date(Date.now() - 1000).toISOString() },
    });
    assert.equal(changed.status, 200, changed.text);
    const rotatedClient = new OpenAI({ baseURL: `${deployment.localUrl}/v1`, apiKey: rotated, maxRetries: 0 });
    const expired = await pollUntil(
      async () => {
        try {
          await rotatedClient.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }], max_tokens: 1 });
          return undefined;
        } catch (error) {
          return error instanceof OpenAI.APIError && error.status === 401 ? error : undefined;
        }
      },
      { timeoutMs: 10_000, description: "the expired key refused" },
    );
    assert.equal(expired.code, "expired");
    assert.equal((expired.error as { type?: string }).type, "authentication_error");
    await pollUntil(async () => /expired \d+ min ago/.test((await rows.nth(0).getByTestId("key-rules").textContent()) ?? "") || undefined, {
      timeoutMs: 15_000,
      intervalMs: 250,
      description: "the rotated key's row to say it expired",
    });
    await pollUntil(
      async () =>
        (await panel.locator(`tr[data-usage-key-id="${rotatedId}"]`).getByTestId("usage-errors").textContent())?.includes("401 ×") ? true : undefined,
      {
        timeoutMs: 15_000,
        intervalMs: 250,
        description: "the 401 in the usage panel",
      },
    );
  });
});
