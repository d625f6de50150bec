/**
 * The job page's samples (issue 27): after the quickstart trains through the studio (Run
 * training), the page shows token accuracy, the pass-rate curve beside the loss with a point per
 * checkpoint (0: the base model), the sample table of the latest checkpoint (prompt, reference,
 * answer, each grader's verdict, the change from the step before), a tab per checkpoint, and the
 * best checkpoint marked. Real browser, studio, cloud, worker and training. Screenshots:
 * test-results/screenshots/studio-job-samples-{light,dark}.png.
 */
import assert from "node:assert/strict";
import type { Page } from "playwright-core";
import type { Job } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { projectClient, startStudioStack, trainThroughStudio, type StudioStack } from "../../support/studioStack.js";

describe("studio job page: samples, pass rate and the best checkpoint (issue 27)", function () {
  this.timeout(480_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;
  let job: Job;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 1 }), launchChromium({ viewport: { width: 1280, height: 1000 } })]);
    page = browser.page;
    consoleWatch = watchConsole(page);
    job = await trainThroughStudio(stack.studio, 420_000);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("shows a point per checkpoint on the pass-rate curve and the latest checkpoint's graded table", async () => {
    const { checkpoints } = await projectClient(stack).listJobSamples(job.id);
    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    const points = page.getByTestId("pass-rate-point");
    await pollUntil(async () => ((await points.count()) === checkpoints.length ? true : undefined), {
      timeoutMs: 30_000,
      description: "a point per checkpoint",
    });
    const drawn = await points.evaluateAll((nodes) => nodes.map((n) => [Number(n.getAttribute("data-step")), Number(n.getAttribute("data-rate"))]));
    assert.deepEqual(
      drawn,
      checkpoints.map((c) => [c.step, c.passRate]),
    );
    assert.ok(drawn[0][0] === 0 && drawn.at(-1)![1] > drawn[0][1], `the curve rises from the base model: ${JSON.stringify(drawn)}`);

    const last = checkpoints.at(-1)!;
    const table = page.getByTestId("samples-table");
    assert.equal(await table.getAttribute("data-step"), String(last.step), "the latest checkpoint is shown first");
    const rows = table.getByTestId("sample-row");
    assert.equal(await rows.count(), last.samples.length);
    const first = rows.first();
    assert.equal(await first.locator("td").nth(0).textContent(), last.samples[0].prompt);
    assert.equal(await first.locator("td").nth(1).textContent(), last.samples[0].reference);
    assert.equal(await first.locator("td").nth(2).textContent(), last.samples[0].answer);
    assert.equal(await first.locator('td[data-grader="json_valid"]').textContent(), last.samples[0].grades.json_valid ? "pass" : "fail");
    assert.match(
      (await page.getByTestId("samples-summary").textContent()) ?? "",
      new RegExp(`Step ${last.step}: ${Math.round(last.passRate! * 100)}% of 8 pass`),
    );
    assert.ok(await page.getByTestId("best-adapter").isVisible(), "the best checkpoint is marked");
    await screenshotBothThemes(page, "job-samples");
  });

  it("a checkpoint's tab (or its point) shows its table, with what changed from the step before", async () => {
    const { checkpoints } = await projectClient(stack).listJobSamples(job.id);
    await page.getByTestId("samples-step").first().click();
    const table = page.getByTestId("samples-table");
    await pollUntil(async () => ((await table.getAttribute("data-step")) === "0" ? true : undefined), { timeoutMs: 10_000, description: "step 0's table" });
    assert.match((await page.getByTestId("samples-summary").textContent()) ?? "", /Step 0 \(base model\): 0% of 8 pass/);
    assert.deepEqual(await page.getByTestId("sample-change").allTextContents(), Array(8).fill(""), "nothing before the base model");
    await page.locator(`[data-testid="pass-rate-point"][data-step="${checkpoints[1].step}"] circle`).click();
    await pollUntil(async () => ((await table.getAttribute("data-step")) === String(checkpoints[1].step) ? true : undefined), {
      timeoutMs: 10_000,
      description: "the clicked point's table",
    });
    const changes = await page.getByTestId("sample-change").allTextContents();
    const passes = (row: (typeof checkpoints)[0]["samples"][0]) => Object.values(row.grades).every((g) => g === true);
    checkpoints[1].samples.forEach((row, i) => {
      const before = passes(checkpoints[0].samples[i]);
      const expected =
        !before && passes(row)
          ? "now passes"
          : before && !passes(row)
            ? "now fails"
            : row.answer === checkpoints[0].samples[i].answer
              ? "same"
              : "answer changed";
      assert.equal(changes[i], expected, `row ${i}`);
    });
    assert.deepEqual(consoleWatch.errors, []);
  });
});
