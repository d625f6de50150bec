/**
 * Issue 12's job extras in the real workbench (code-server, driven by Playwright): the Job panel's
 * chart controls (zoom by drag, log scale, smoothing, learning rate and tokens/s plots), the CSV
 * download through VS Code's save dialog, "Open in Playground" opening the Playground panel, and
 * the Compare Jobs panel on two runs picked in a multi-select quick pick.
 * Screenshots, light and dark: test-results/screenshots/vscode-job-extras-*.png, vscode-compare-*.png.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { screenshot, waitForText } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { startWorkbench, THEMES, type WorkbenchSession } from "./workbenchSession.js";
import { openSvcContainer, runCommand, setColorTheme, visibleWebview } from "./workbench.js";

const STEPS = 20;

describe("VS Code workbench: job chart extras and Compare Jobs (issue 12)", function () {
  this.timeout(240_000);
  let session: WorkbenchSession;

  before(async () => {
    session = await startWorkbench({ maxSteps: STEPS, evalSteps: 5, saveSteps: 10 });
  });
  afterEach(async function () {
    await session?.failureScreenshot(this.currentTest);
  });
  after(async () => session?.stop());

  // One workbench, one user: two runs, then their chart and comparison (each step needs the runs).
  it("the Job panel's zoom, log scale, smoothing and extra series; CSV saved through the save dialog; Open in Playground; Compare Jobs", async function () {
    this.timeout(600_000);
    const { browser, workspace } = session;
    const page = browser.page;
    await openSvcContainer(page);
    await page.getByRole("button", { name: "Continue Anonymously" }).click({ timeout: 30_000 });
    await page.getByRole("button", { name: "Run Training" }).first().waitFor({ state: "visible", timeout: 60_000 });

    // Two runs from the palette; each opens its job panel.
    for (let run = 1; run <= 2; run++) {
      await runCommand(page, "svc: Run Training");
      // The Jobs tree's "Completed" group counts the runs (the panel of the run before is completed already).
      await page.locator(".monaco-list-row", { hasText: new RegExp(`^Completed\\s*${run}$`) }).waitFor({ state: "visible", timeout: 180_000 });
    }
    const jobView = visibleWebview(page);
    const loss = jobView.locator('path[data-series="loss"]');
    const vertices = async () => ((await loss.getAttribute("d")) ?? "").split(/[ML]/).filter((s) => s.trim()).length;
    await pollUntil(async () => ((await vertices()) === STEPS ? true : undefined), { timeoutMs: 30_000, description: "every step plotted" });
    await waitForText(jobView.getByTestId("base-model"), "svc-tiny");
    assert.match((await jobView.getByTestId("job-duration").textContent()) ?? "", /^\d+ (s|min)/);

    // Chart controls inside the webview.
    await jobView.getByTestId("job-chart-log-scale").check();
    await jobView.getByTestId("job-chart-smoothing").fill("0.6");
    await jobView.locator('path[data-series="loss-smoothed"]').waitFor({ state: "attached" });
    await jobView.getByTestId("show-learning-rate").check();
    await jobView.locator('path[data-series="learningRate"]').waitFor({ state: "attached" });
    const plot = jobView.locator("svg.plot");
    const box = (await plot.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.35, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.75, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    await jobView.getByTestId("job-chart-zoom").waitFor({ state: "visible" });
    assert.ok((await vertices()) < STEPS, "zoomed in");
    await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2);
    await screenshot(page, "vscode-job-extras-dark");
    await setColorTheme(page, THEMES.light);
    await page.mouse.move(box.x + box.width * 0.55, box.y + box.height / 2);
    await screenshot(page, "vscode-job-extras-light");
    await plot.dblclick();
    await jobView.getByTestId("job-chart-zoom").waitFor({ state: "detached" });

    // CSV: the webview cannot download; the host asks where to save (code-server's simple dialog: a path input).
    await jobView.getByTestId("download-csv").click();
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    // The dialog fills in the folder, then the suggested name.
    const suggested = await pollUntil(
      async () => {
        const value = await input.inputValue();
        return /quickstart-json-answers-[0-9a-f]{8}-metrics\.csv$/.test(value) ? value : undefined;
      },
      { timeoutMs: 10_000, description: "the suggested file name in the save dialog" },
    );
    assert.equal(path.dirname(suggested), workspace.path, "suggested in the workspace folder");
    await screenshot(page, "vscode-job-extras-save-dialog-light");
    await page.keyboard.press("Enter");
    const saved = path.join(workspace.path, path.basename(suggested));
    await pollUntil(() => (existsSync(saved) ? true : undefined), { timeoutMs: 20_000, description: "the CSV file" });
    const rows = readFileSync(saved, "utf8").trimEnd().split("\n");
    assert.equal(rows[0], "step,loss,evalLoss,learningRate,tokensPerSecond,tokenAccuracy,evalTokenAccuracy");
    assert.equal(rows.length, STEPS + 1);

    // Open in Playground: the Playground panel, this job's adapter chosen.
    await jobView.getByTestId("open-playground").click();
    await page.locator(".tab.active", { hasText: "Playground" }).waitFor({ timeout: 30_000 });
    await visibleWebview(page)
      .getByText(/^Final adapter \(job [0-9a-f]{8}\)$/)
      .first()
      .waitFor({ timeout: 30_000 });

    // Compare Jobs: pick both runs in the multi-select quick pick.
    await runCommand(page, "svc: Compare Jobs…");
    const rowsInPick = page.locator(".quick-input-widget .monaco-list-row", { hasText: "quickstart-json-answers" });
    await rowsInPick.first().waitFor({ state: "visible" });
    // Tick each row until its own aria-checked says so; never click a row that already is (a
    // second click on a slow re-render would untick it). Then OK, once the pick's count agrees.
    const pick = page.locator(".quick-input-widget");
    for (let i = 0; i < 2; i++) {
      const row = rowsInPick.nth(i);
      await pollUntil(
        async () => {
          if ((await row.getAttribute("aria-checked")) === "true") return true;
          await row.getByRole("checkbox").first().click();
          return undefined;
        },
        { timeoutMs: 20_000, description: `job ${i + 1} ticked in the Compare Jobs pick` },
      );
    }
    await pick.locator(".quick-input-count", { hasText: "2 Selected" }).waitFor({ state: "visible" });
    await pick.getByRole("button", { name: "OK" }).click();
    await pick.waitFor({ state: "hidden" });
    const compareView = visibleWebview(page);
    await compareView.locator('path[data-series="loss-1"]').waitFor({ state: "attached", timeout: 60_000 });
    assert.equal(await compareView.locator("tr[data-config-key]").first().getAttribute("data-config-key"), "name");
    await compareView.getByText("The configs are identical.").waitFor();
    await screenshot(page, "vscode-compare-light");
    await setColorTheme(page, THEMES.dark);
    await screenshot(page, "vscode-compare-dark");
    // A run's name opens its Job panel.
    await compareView.getByTestId("compare-run").first().getByRole("button").click();
    await visibleWebview(page).locator('path[data-series="loss"]').waitFor({ state: "attached", timeout: 30_000 });
  });
});
