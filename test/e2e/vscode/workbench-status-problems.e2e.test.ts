/**
 * In the real workbench: a dataset's invalid lines in the Problems panel (with their line
 * numbers), and the running job's status-bar item, whose click opens the job's panel. Light and
 * dark screenshots: test-results/screenshots/vscode-problems-*.png and vscode-status-bar-*.png.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { startCodeServer, type CodeServer } from "../../support/code-server.js";
import { launchChromium, screenshot, type ChromiumSession } from "../../support/chromium.js";
import type { TempDir } from "../../support/tmp.js";
import { cloudForVsCode, quickstartWorkspace, stageExtension, type StagedExtension } from "./fixtures.js";
import { openSvcContainer, runCommand, setColorTheme, visibleWebview } from "./workbench.js";

const THEMES = { light: "Default Light Modern", dark: "Default Dark Modern" } as const;

describe("VS Code workbench: Problems and the status bar", function () {
  this.timeout(300_000);
  let cloud: Awaited<ReturnType<typeof cloudForVsCode>>;
  let workspace: TempDir;
  let extension: StagedExtension;
  let server: CodeServer;
  let browser: ChromiumSession;

  before(async () => {
    extension = await stageExtension();
    cloud = await cloudForVsCode();
    // A long run: the status bar is looked at mid-run, and the run is stopped from the notification.
    workspace = await quickstartWorkspace({ maxSteps: 5000, evalSteps: 50, saveSteps: 0 });
    server = await startCodeServer({
      workspace: workspace.path,
      extensionDevelopmentPath: extension.path,
      settings: { "svc.cloud.url": cloud.cloudUrl, "svc.studio.port": 0, "workbench.colorTheme": THEMES.dark, "remote.autoForwardPorts": false },
    });
    browser = await launchChromium({ viewport: { width: 1440, height: 900 } });
    await browser.page.goto(server.url);
    await browser.page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
    await openSvcContainer(browser.page);
    await browser.page.getByRole("button", { name: "Continue Anonymously" }).click();
    await browser.page.getByRole("button", { name: "Run Training" }).first().waitFor({ state: "visible", timeout: 60_000 });
  });

  afterEach(async function () {
    if (this.currentTest?.state === "failed" && browser) {
      await screenshot(browser.page, `vscode-failed-${this.currentTest.title.replace(/\W+/g, "-").slice(0, 40)}`).catch(() => undefined);
    }
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    cloud?.restoreEnv();
    await cloud?.dispose();
    await workspace?.remove();
    await extension?.remove();
  });

  it("the Problems panel lists a dataset's invalid lines by number", async () => {
    const page = browser.page;
    const file = path.join(workspace.path, "data", "eval.jsonl");
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    await writeFile(file, [lines[0], "{not json", ...lines.slice(1), JSON.stringify({ messages: [{ role: "user", content: "no answer" }] })].join("\n") + "\n");
    try {
      await page.keyboard.press("Control+Shift+M"); // View: Problems
      const panel = page.locator(".markers-panel");
      await panel.getByText("not valid JSON").waitFor({ state: "visible", timeout: 30_000 });
      await panel.getByText("messages must contain an assistant message").waitFor({ state: "visible" });
      const text = (await panel.locator(".monaco-list-row").allInnerTexts()).join("\n");
      assert.match(text, /eval\.jsonl/);
      assert.match(text, /\[Ln 2, Col 1\]/, text);
      assert.match(text, new RegExp(`\\[Ln ${lines.length + 2}, Col 1\\]`), text);
      await screenshot(page, "vscode-problems-dark");
      await setColorTheme(page, THEMES.light);
      await screenshot(page, "vscode-problems-light");
    } finally {
      await writeFile(file, lines.join("\n") + "\n");
    }
    await page.locator(".markers-panel").getByText("not valid JSON").waitFor({ state: "detached", timeout: 30_000 });
  });

  it("a running job's step and loss sit in the status bar; a click opens its panel; Cancel on the notification stops the run", async () => {
    const page = browser.page;
    await runCommand(page, "svc: Run Training");
    const item = page.locator(".statusbar-item", { hasText: /svc: step \d+\/5000 · loss \d+\.\d{4}/ });
    await item.waitFor({ state: "visible", timeout: 120_000 });
    await runCommand(page, "View: Close All Editors");
    await screenshot(page, "vscode-status-bar-light");
    await item.click();
    await visibleWebview(page).getByTestId("job-status").waitFor({ state: "visible", timeout: 30_000 });
    await setColorTheme(page, THEMES.dark);
    await screenshot(page, "vscode-status-bar-dark");

    // Run Training's progress notification: its Cancel is the Overview's Stop.
    const toast = page.locator(".notifications-toasts .notification-toast", { hasText: "svc: Training" });
    await toast.hover();
    await toast.getByRole("button", { name: "Cancel" }).click();
    await page.locator(".notifications-toasts", { hasText: /Training stopped: job \S+ was cancelled\./ }).waitFor({ state: "visible", timeout: 60_000 });
    await item.waitFor({ state: "hidden", timeout: 30_000 });
  });
});
