/**
 * In the real workbench: a dataset's invalid lines in the Problems panel (with their line
 * numbers), and the running job's status-bar item, whose click opens the job's panel. Light and
 * dark screenshots: test-results/screenshots/vscode-problems-*.png and vscode-status-bar-*.png.
 */
import assert from "node:assert/strict";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { screenshot } from "../../support/chromium.js";
import { openSvcContainer, runCommand, setColorTheme, visibleWebview } from "./workbench.js";
import { startWorkbench, THEMES, type WorkbenchSession } from "./workbenchSession.js";

describe("VS Code workbench: Problems and the status bar", function () {
  this.timeout(300_000);
  let session: WorkbenchSession | undefined;

  before(async () => {
    // A long run: the status bar is looked at mid-run, and the run is stopped from the notification.
    session = await startWorkbench({ maxSteps: 5000, evalSteps: 50, saveSteps: 0 });
    const page = session.browser.page;
    await openSvcContainer(page);
    await page.getByRole("button", { name: "Continue Anonymously" }).click();
    await page.getByRole("button", { name: "Run Training" }).first().waitFor({ state: "visible", timeout: 60_000 });
  });

  afterEach(async function () {
    await session?.failureScreenshot(this.currentTest);
  });

  after(async () => {
    await session?.stop();
  });

  it("the Problems panel lists a dataset's invalid lines by number", async () => {
    const page = session!.browser.page;
    const file = path.join(session!.workspace.path, "data", "eval.jsonl");
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
    const page = session!.browser.page;
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
