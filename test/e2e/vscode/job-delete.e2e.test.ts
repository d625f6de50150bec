/**
 * Delete in the real workbench (issue 26): the Job panel shows the disk the job uses, its Delete
 * opens VS Code's modal, and confirming deletes the job, closes its panel and empties the Jobs tree.
 * Screenshots: test-results/screenshots/vscode-job-delete-*.png.
 */
import { screenshot } from "../../support/chromium.js";
import { startWorkbench, type WorkbenchSession } from "./workbenchSession.js";
import { dialog, openSvcContainer, runCommand, visibleWebview } from "./workbench.js";

describe("VS Code workbench: Delete in the Job panel (issue 26)", function () {
  this.timeout(300_000);
  let session: WorkbenchSession;

  before(async () => {
    session = await startWorkbench({ maxSteps: 4, evalSteps: 2, saveSteps: 2 });
  });
  afterEach(async function () {
    await session?.failureScreenshot(this.currentTest);
  });
  after(async () => session?.stop());

  it("shows the job's disk use, asks with a modal, deletes the job and closes its panel", async () => {
    const page = session.browser.page;
    await openSvcContainer(page);
    await page.getByRole("button", { name: "Continue Anonymously" }).click({ timeout: 30_000 });
    await page.getByRole("button", { name: "Run Training" }).first().waitFor({ state: "visible", timeout: 60_000 });
    await runCommand(page, "svc: Run Training");
    const completedGroup = page.locator(".monaco-list-row", { hasText: /^Completed\s*1$/ });
    await completedGroup.waitFor({ state: "visible", timeout: 180_000 });

    const jobView = visibleWebview(page);
    await jobView
      .getByTestId("job-disk")
      .filter({ hasText: /^\d[\d.]* (B|KB|MB)$/ })
      .waitFor({ timeout: 30_000 });
    await jobView.getByTestId("delete-job").waitFor();
    await screenshot(page, "vscode-job-delete-panel");

    await jobView.getByTestId("delete-job").click();
    const modal = dialog(page);
    await modal.waitFor({ state: "visible" });
    await modal.getByText(/^Delete job “.+”\?$/).waitFor();
    await modal.getByText(/the datasets no other job uses \(.+\) are deleted\. This cannot be undone\./).waitFor();
    await screenshot(page, "vscode-job-delete-modal");
    await modal.getByRole("button", { name: "Delete Job" }).click();

    await page.locator(".tab", { hasText: "Job: " }).waitFor({ state: "detached", timeout: 30_000 });
    await completedGroup.waitFor({ state: "detached", timeout: 30_000 });
  });
});
