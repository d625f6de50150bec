/**
 * The base-model pickers in a real browser: the create-endpoint form and the Playground list each
 * registered model with its facts on one line and mark serve-only ones, against a real cloud with
 * small real GGUFs registered through the admin route. Screenshots, light and dark, go to
 * test-results/screenshots/studio-models-*.png.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { writeTinyModel } from "../../support/modelFiles.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { startStudioStack, type StudioStack } from "../../support/studioStack.js";

describe("studio: base-model pickers show the models' facts", function () {
  this.timeout(120_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack(), launchChromium()]);
    page = browser.page;
    consoleWatch = watchConsole(page);
    const token = readFileSync(path.join(stack.cloud.dataDir, "worker-token"), "utf8").trim();
    const register = async (name: string, spec: Parameters<typeof writeTinyModel>[1]) => {
      const file = await writeTinyModel(path.join(stack.tmp.path, `${name}.gguf`), spec);
      const res = await fetch(`${stack.cloud.cloudUrl}/v1/models`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ name, path: file.path }),
      });
      assert.equal(res.status, 201, await res.text());
    };
    await register("my-qwen", { architecture: "qwen3", name: "Qwen3 0.6B", fileType: 15, contextLength: 40960 });
    await register("gemma-2b", { architecture: "gemma2", name: "Gemma 2 2B", fileType: 15, contextLength: 8192 });
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** The Model select's option texts once the list has loaded. */
  async function modelOptions(): Promise<string[]> {
    const select = page.getByLabel("Model", { exact: true });
    return pollUntil(
      async () => {
        const texts = (await select.locator("option").allTextContents()).map((t) => t.trim());
        return texts.length >= 3 ? texts : undefined;
      },
      { timeoutMs: 10_000, description: "the registered models in the picker" },
    );
  }

  it("create endpoint: one line of facts per model, serve-only marked with its reason", async () => {
    await openRoute(page, stack.studio.url, "#/endpoints");
    await page.locator("vscode-button", { hasText: "New endpoint" }).click();
    await page.getByRole("radio", { name: "Base model" }).check();
    const options = await modelOptions();
    assert.match(options.find((o) => o.startsWith("svc-tiny")) ?? "", /^svc-tiny · llama · \S+ · \S+ · ctx 160$/);
    assert.match(options.find((o) => o.startsWith("my-qwen")) ?? "", /^my-qwen · qwen3 · \S+ · Q4_K_M · ctx 40960$/);
    assert.match(options.find((o) => o.startsWith("gemma-2b")) ?? "", /^gemma-2b · gemma2 · \S+ · Q4_K_M · ctx 8192 · serve only$/);
    assert.equal(await page.getByTestId("serve-only-reason").count(), 0, "svc-tiny is selected first: nothing to explain");
    await page.getByLabel("Model", { exact: true }).selectOption("gemma-2b");
    const reason = page.getByTestId("serve-only-reason");
    await reason.waitFor();
    assert.match((await reason.textContent()) ?? "", /^Serve only: .*gemma2/);
    await screenshotBothThemes(page, "models-create-endpoint");
  });

  it("Playground: the same facts in its target picker", async () => {
    await openRoute(page, stack.studio.url, "#/playground");
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    await page.getByRole("radio", { name: "Base model" }).check();
    const options = await modelOptions();
    assert.ok(
      options.some((o) => /^my-qwen · qwen3 · .* · ctx 40960$/.test(o)),
      options.join("\n"),
    );
    await page.getByLabel("Model", { exact: true }).selectOption("my-qwen");
    await screenshotBothThemes(page, "models-playground");
  });

  it("ran without script errors", () => {
    assert.deepEqual(consoleWatch.errors, []);
  });
});
