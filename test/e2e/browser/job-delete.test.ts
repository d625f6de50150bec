/**
 * The studio's job page: the disk a job uses, and Delete behind its confirmation (issue 26). A
 * deployed job is refused with the cloud's message naming the endpoint; once that is gone the job
 * is deleted and the page says so. Real browser, real studio, real cloud with one training worker.
 * Screenshots: test-results/screenshots/studio-job-delete-*.png, light and dark.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import { formatBytes } from "../../../ui-shared/format.js";
import { NotFoundError } from "../../../sdk/errors.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { projectClient, startStudioStack, trainThroughStudio, type StudioStack } from "../../support/studioStack.js";

describe("studio job page: disk used and Delete (issue 26)", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;

  before(async () => {
    [stack, browser] = await Promise.all([
      startStudioStack({ workers: 1, maxSteps: 4, evalSteps: 2, saveSteps: 2 }),
      launchChromium({ viewport: { width: 1280, height: 1000 } }),
    ]);
    page = browser.page;
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("shows the disk a job uses, refuses a deployed job with the cloud's message, and deletes after confirming", async () => {
    const consoleWatch = watchConsole(page);
    const job = await trainThroughStudio(stack.studio);
    const client = projectClient(stack);
    const { diskBytes } = await client.getJob(job.id);
    assert.ok(diskBytes !== undefined && diskBytes > 0, `the cloud counts the job's bytes: ${diskBytes}`);
    const deployment = await client.createDeployment({ slug: "keeps-the-job", target: { kind: "adapter", jobId: job.id }, authMode: "none" });

    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    await page
      .getByTestId("job-disk")
      .filter({ hasText: formatBytes(diskBytes) })
      .waitFor();
    await screenshotBothThemes(page, "job-delete-page");

    // Keep: nothing happens.
    await page.getByTestId("delete-job").click();
    const confirmation = page.getByTestId("delete-job-confirm");
    await confirmation.waitFor();
    assert.match((await confirmation.textContent()) ?? "", new RegExp(`Delete “${job.name}”\\? This cannot be undone\\.`));
    await screenshotBothThemes(page, "job-delete-confirm");
    await confirmation.getByText("Keep").click();
    await page.getByTestId("delete-job").waitFor();
    assert.equal((await client.getJob(job.id)).id, job.id);

    // Deployed: the cloud refuses and the page shows its words.
    await page.getByTestId("delete-job").click();
    await confirmation.getByText("Delete job").click();
    const refusal = page.getByTestId("delete-job-error");
    await refusal.waitFor();
    assert.match((await refusal.textContent()) ?? "", /is served by deployment "keeps-the-job"/);
    await screenshotBothThemes(page, "job-delete-refused");

    await client.deleteDeployment(deployment.id);
    await page.getByTestId("delete-job").click();
    await confirmation.getByText("Delete job").click();
    await page.getByTestId("job-deleted").waitFor();
    assert.match((await page.getByTestId("job-deleted").textContent()) ?? "", new RegExp(`Job “${job.name}” deleted`));
    await screenshotBothThemes(page, "job-delete-done");
    await assert.rejects(client.getJob(job.id), NotFoundError);

    // The jobs list no longer has it: the project's only job is gone, so the list is empty.
    await openRoute(page, stack.studio.url, "#/jobs");
    await page.locator(".empty-state").waitFor();
    assert.equal(await page.getByText(job.name).count(), 0);
    // The browser logs the refused DELETE (409) itself; nothing else may be an error.
    assert.deepEqual(
      consoleWatch.errors.filter((error) => !/status of 409 \(Conflict\) @ .*\/api\/jobs\//.test(error)),
      [],
    );
  });
});
