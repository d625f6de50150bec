/**
 * Issue 12's Datasets preview, adapter downloads and Playground side by side in the real workbench
 * (code-server, driven by Playwright): Preview Datasets from the palette (counts, the length
 * histogram, a problem whose line opens the dataset in an editor at that line, the fix read again);
 * then one short run, its GGUF adapter saved from the Job panel through VS Code's save dialog, and
 * its "Compare with base model" opening the Playground panel, where one prompt streams to the base
 * model and the adapter at once. Screenshots, light and dark: vscode-datasets-*.png, vscode-adapter-files-*.png,
 * vscode-playground-*.png.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { screenshot } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openSvcContainer, runCommand, setColorTheme, visibleWebview } from "./workbench.js";
import { startWorkbench, THEMES, type WorkbenchSession } from "./workbenchSession.js";

const STATS = /^first token \d+(\.\d+)? m?s · \d+(\.\d)? tokens\/s · \d+ tokens$/;

describe("VS Code workbench: Datasets, adapter downloads, Playground side by side (issue 12)", function () {
  this.timeout(240_000);
  let session: WorkbenchSession;

  before(async () => {
    session = await startWorkbench({ maxSteps: 6, evalSteps: 3, saveSteps: 3 });
    const page = session.browser.page;
    await openSvcContainer(page);
    await page.getByRole("button", { name: "Continue Anonymously" }).click({ timeout: 30_000 });
    await page.getByRole("button", { name: "Run Training" }).first().waitFor({ state: "visible", timeout: 60_000 });
  });
  afterEach(async function () {
    await session?.failureScreenshot(this.currentTest);
  });
  after(async () => session?.stop());

  it("Preview Datasets: counts and lengths, a problem's line opens the dataset there, the fix read again", async function () {
    this.timeout(300_000);
    const page = session.browser.page;
    const train = path.join(session.workspace.path, "data", "train.jsonl");
    const original = readFileSync(train, "utf8");
    const lines = original.trimEnd().split("\n");
    writeFileSync(train, [lines[0], "{not json", ...lines.slice(1)].join("\n") + "\n");

    await runCommand(page, "svc: Preview Datasets");
    const view = visibleWebview(page);
    await view
      .getByTestId("preview-verdict")
      .getByText("Not ready: svc start would refuse these datasets. Fix the problems below.")
      .waitFor({ timeout: 90_000 });
    const split = view.getByTestId("dataset-train");
    assert.equal(await split.getByTestId("conversations").textContent(), String(lines.length));
    assert.equal(await split.getByTestId("problem-count").textContent(), "1");
    const counts = await split.locator("rect.bar").evaluateAll((bars) => bars.map((b) => Number(b.getAttribute("data-count"))));
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      lines.length,
      "every conversation in the histogram",
    );
    await page.locator(".tab", { hasText: "Datasets" }).first().waitFor();
    await screenshot(page, "vscode-datasets-dark");
    await setColorTheme(page, THEMES.light);
    await screenshot(page, "vscode-datasets-light");

    // The problem's line number opens the dataset in an editor, the cursor on that line.
    await split.getByTestId("dataset-issues").getByRole("button", { name: "line 2" }).click();
    await page.locator(".tab.active", { hasText: "train.jsonl" }).waitFor({ timeout: 30_000 });
    await page.locator('[id="status.editor.selection"]', { hasText: "Ln 2, Col 1" }).waitFor({ timeout: 30_000 });

    // Fixed on disk: Preview Datasets again brings the panel back and reads the files again.
    writeFileSync(train, original);
    await runCommand(page, "svc: Preview Datasets");
    await visibleWebview(page)
      .getByTestId("preview-verdict")
      .getByText(/^Ready to train: svc start would upload these datasets and train 6 steps/)
      .waitFor({ timeout: 90_000 });
  });

  it("one run: its GGUF adapter saved from the Job panel; Compare with base model streams both in the Playground panel", async function () {
    this.timeout(600_000);
    const { browser, workspace, cloud } = session;
    const page = browser.page;
    await runCommand(page, "svc: Run Training");
    const jobView = visibleWebview(page);
    await jobView.locator('[data-testid="job-status"] [data-status="completed"]').waitFor({ state: "visible", timeout: 180_000 });

    // The adapter through VS Code's save dialog (code-server's simple dialog: a path input, filled with the studio's name).
    const final = jobView.getByTestId("adapter-download").filter({ hasText: "Final adapter" });
    await jobView.getByTestId("adapter-files").scrollIntoViewIfNeeded();
    await screenshot(page, "vscode-adapter-files-light");
    await final.getByTestId("download-gguf").click();
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible" });
    const suggested = await pollUntil(
      async () => {
        const value = await input.inputValue();
        return /quickstart-json-answers-[0-9a-f]{8}-adapter\.gguf$/.test(value) ? value : undefined;
      },
      { timeoutMs: 20_000, description: "the adapter's name in the save dialog" },
    );
    assert.equal(path.dirname(suggested), workspace.path, "suggested in the workspace folder");
    await page.keyboard.press("Enter");
    const saved = path.join(workspace.path, path.basename(suggested));
    await pollUntil(() => (existsSync(saved) && !existsSync(`${saved}.part`) ? true : undefined), { timeoutMs: 30_000, description: "the saved adapter" });
    const [jobId] = readdirSync(path.join(cloud.dataDir, "artifacts"));
    assert.ok(readFileSync(saved).equals(readFileSync(path.join(cloud.dataDir, "artifacts", jobId, "adapter.gguf"))), "the saved file is the job's adapter");

    // Compare with base model: the Playground panel, the base model beside the adapter, one prompt to both.
    await jobView.getByTestId("compare-in-playground").click();
    await page.locator(".tab.active", { hasText: "Playground" }).waitFor({ timeout: 30_000 });
    const playground = visibleWebview(page);
    const side = (name: "A" | "B") => playground.getByTestId(`playground-side-${name}`);
    await side("A").getByText("Base model: svc-tiny").waitFor({ timeout: 30_000 });
    await side("B")
      .getByText(`Final adapter (job ${jobId.slice(0, 8)})`)
      .waitFor();
    await playground.getByLabel("Temperature").fill("0");
    await playground.getByLabel("Max tokens").fill("16");
    await playground.getByLabel("Message", { exact: true }).fill("What is the opposite of loud?");
    await playground.getByLabel("Message", { exact: true }).press("Enter");
    for (const name of ["A", "B"] as const) {
      const stats = side(name).getByTestId("reply-stats");
      const text = await pollUntil(
        async () => {
          const shown = ((await stats.textContent()) ?? "").replace(/^Side [AB], last reply:\s*/, "");
          return STATS.test(shown) ? shown : undefined;
        },
        { timeoutMs: 90_000, description: `side ${name}'s reply and its tokens/s` },
      );
      assert.match(text, STATS);
      assert.notEqual(((await side(name).locator(".message-assistant .content").textContent()) ?? "").trim(), "", `side ${name} answered`);
    }
    await screenshot(page, "vscode-playground-light");
    await setColorTheme(page, THEMES.dark);
    await screenshot(page, "vscode-playground-dark");
    await page.locator(".tab", { hasText: "Job: quickstart-json-answers" }).click();
    await visibleWebview(page).getByTestId("adapter-files").scrollIntoViewIfNeeded();
    await screenshot(page, "vscode-adapter-files-dark");
  });
});
