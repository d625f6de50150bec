/**
 * Issue 12: what a new user meets in the studio's first hour, in a real browser against the real
 * studio and a real cloud with one training worker. Each test failed before its fix.
 * Screenshots go to test-results/screenshots/studio-first-hour-*.png.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { startStudioStack, studioRequest, type StudioStack } from "./support/studioStack.js";

describe("studio in the browser: the first hour (issue 12)", function () {
  this.timeout(180_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 1, maxSteps: 12 }), launchChromium()]);
    page = browser.page;
    watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("Playground: the reply of a base model appears in the transcript (streamed)", async () => {
    // What the model says at temperature 0, asked through the studio for a whole JSON completion.
    const messages = [{ role: "user", content: "Hello" }];
    const expected = await studioRequest(stack.studio, "POST", "/api/inference/chat", {
      body: { target: { kind: "base_model", name: "svc-tiny" }, messages, temperature: 0, maxTokens: 12, stream: false },
    });
    assert.equal(expected.status, 200, expected.text);
    const expectedText = expected.json.choices[0].message.content as string;
    assert.notEqual(expectedText, "", "svc-tiny says something at temperature 0");

    await openRoute(page, stack.studio.url, "#/playground");
    await page.getByRole("radio", { name: "Base model" }).check();
    await page.getByLabel("Temperature").fill("0");
    await page.getByLabel("Max tokens").fill("12");
    await page.getByLabel("Message", { exact: true }).fill("Hello");
    await page.getByLabel("Message", { exact: true }).press("Enter");
    // The Send button comes back when the reply has finished streaming.
    await page.locator("vscode-button", { hasText: "Send" }).waitFor({ timeout: 60_000 });
    const reply = page.locator(".message-assistant .content");
    assert.equal(await reply.count(), 1, "the assistant's message stayed in the transcript");
    assert.equal(await reply.textContent(), expectedText);
    assert.equal(await page.getByRole("alert").count(), 0);
    await screenshotBothThemes(page, "first-hour-playground-reply");
  });
});
