/**
 * Compare runs (issue 12): pick 2 to 5 jobs in the Jobs list (checkboxes, keyboard reachable),
 * open `#/compare?ids=`, see their loss curves overlaid and their configs side by side with the
 * differing values highlighted. Two real training runs through the real studio: the quickstart,
 * and a copy of it with another learning rate and step count (a second project folder sharing the
 * first one's cloud project, as a user would run a variant). Made on first use, so any test runs
 * alone. Screenshots: test-results/screenshots/studio-compare-*.png, light and dark.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import type { Job } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, pathVertexCount, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { copyQuickstart, projectClient, startStudioStack, trainThroughStudio, type StudioStack } from "../../support/studioStack.js";

const STEPS_A = 30;
const STEPS_B = 20;

describe("studio compare runs (issue 12)", function () {
  this.timeout(300_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;
  let runs: Promise<[Job, Job]> | undefined;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 1, maxSteps: STEPS_A }), launchChromium({ viewport: { width: 1280, height: 1000 } })]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** The quickstart as is, then a variant (learning rate 1e-3, fewer steps) from a second folder of the same cloud project. */
  async function trainBoth(): Promise<[Job, Job]> {
    const first = await trainThroughStudio(stack.studio, 150_000);
    const variantDir = copyQuickstart(path.join(stack.tmp.path, "variant"), { maxSteps: STEPS_B });
    const source = path.join(variantDir, "src", "svc", "index.ts");
    writeFileSync(source, readFileSync(source, "utf8").replace(/learningRate: [\d.e-]+/, "learningRate: 1e-3"));
    mkdirSync(path.join(variantDir, ".svc"), { recursive: true });
    copyFileSync(path.join(stack.projectDir, ".svc", "state.json"), path.join(variantDir, ".svc", "state.json"));
    const second = await trainThroughStudio(await stack.studioFor(variantDir), 150_000);
    return [first, second];
  }
  const trainedRuns = () => (runs ??= trainBoth());

  const row = (id: string) => page.locator(`tr[data-job-id="${id}"]`);
  const checkbox = (id: string) => row(id).getByTestId("compare-select");
  const compareButton = () => page.getByTestId("compare-button");

  it("Jobs: checkboxes pick jobs by keyboard; Compare needs 2 and takes at most 5", async () => {
    const [a, b] = await trainedRuns();
    // Four more (never trained: cancelled at once) so there are six to choose from.
    const client = projectClient(stack);
    const extra: Job[] = [];
    for (let i = 1; i <= 4; i++) {
      const job = await client.createJob({ name: `extra-${i}`, config: { maxSteps: 1 } });
      extra.push(await client.cancelJob(job.id).catch(() => job));
    }
    await openRoute(page, stack.studio.url, "#/jobs");
    await row(extra[3].id).waitFor();
    assert.equal(await compareButton().getAttribute("aria-disabled"), "true", "nothing picked: disabled");

    // Keyboard: Tab reaches the first row's checkbox, Space ticks it.
    await checkbox(a.id).focus();
    await page.keyboard.press("Space");
    assert.equal(await checkbox(a.id).isChecked(), true);
    assert.equal(await compareButton().getAttribute("aria-disabled"), "true", "one picked: still disabled");
    await page.getByText("Select at least one more job.").waitFor();
    await checkbox(b.id).check();
    await page.getByText("2 jobs selected.").waitFor();
    assert.equal(await compareButton().getAttribute("aria-disabled"), null);
    assert.match((await compareButton().textContent()) ?? "", /Compare \(2\)/);
    // The selection survives a search that hides one of them.
    await page.getByPlaceholder("Search by name or ID").fill("extra");
    await row(extra[0].id).waitFor();
    for (const job of extra.slice(0, 3)) await checkbox(job.id).check();
    await page.getByText("5 jobs selected (the most).").waitFor();
    assert.equal(await checkbox(extra[3].id).isDisabled(), true, "a sixth is refused");
    assert.equal(await checkbox(extra[3].id).getAttribute("title"), "Compare at most 5 jobs");
    await screenshotBothThemes(page, "compare-jobs-selected");
    await page.getByRole("button", { name: "Clear selection" }).click();
    assert.equal(await compareButton().getAttribute("aria-disabled"), "true");
    await page.getByPlaceholder("Search by name or ID").fill("");
  });

  it("overlays both runs' loss curves and shows their configs side by side, differences highlighted", async () => {
    const [a, b] = await trainedRuns();
    await openRoute(page, stack.studio.url, "#/jobs");
    await checkbox(a.id).check();
    await checkbox(b.id).check();
    await compareButton().click();
    await page.waitForURL(/#\/compare\?ids=/);
    assert.equal(new URL(page.url()).hash, `#/compare?ids=${a.id},${b.id}`);

    // One colour per run, in pick order: solid training loss, dashed eval loss with markers.
    const lossA = page.locator('path[data-series="loss-0"]');
    const lossB = page.locator('path[data-series="loss-1"]');
    await pollUntil(async () => (pathVertexCount(await lossA.getAttribute("d", { timeout: 1000 }).catch(() => null)) === STEPS_A ? true : undefined), {
      timeoutMs: 30_000,
      description: "run A's curve",
    });
    await pollUntil(async () => (pathVertexCount(await lossB.getAttribute("d")) === STEPS_B ? true : undefined), {
      timeoutMs: 30_000,
      description: "run B's curve",
    });
    assert.ok((await page.locator('circle[data-series="eval-0"]').count()) > 0);
    assert.ok((await page.locator('circle[data-series="eval-1"]').count()) > 0);
    assert.notEqual(await lossA.evaluate((el) => getComputedStyle(el).stroke), await lossB.evaluate((el) => getComputedStyle(el).stroke), "different colours");
    assert.notEqual(await page.locator('path[data-series="eval-0"]').evaluate((el) => getComputedStyle(el).strokeDasharray), "none");

    // Hover reads both runs at that step.
    await page.locator("svg.plot").focus();
    await page.keyboard.press("Home");
    const readout = (await page.locator("svg.plot").getAttribute("aria-valuetext")) ?? "";
    assert.match(readout, /^Step 1, quickstart-json-answers: loss \d\.\d{4}, quickstart-json-answers: loss \d\.\d{4}$/);

    // The table: summary rows, then the config; learningRate and maxSteps differ, the model does not.
    const configRow = (key: string) => page.locator(`tr[data-config-key="${key}"]`);
    await configRow("learningRate").waitFor();
    assert.equal(await configRow("learningRate").getAttribute("data-differs"), "true");
    assert.deepEqual(await configRow("learningRate").locator("td").allTextContents(), ["0.003", "0.001"]);
    assert.equal(await configRow("maxSteps").getAttribute("data-differs"), "true");
    assert.equal(await configRow("model").getAttribute("data-differs"), "false");
    assert.deepEqual(await configRow("lora.targetModules").locator("td").allTextContents(), ['["q_proj","v_proj","o_proj"]', '["q_proj","v_proj","o_proj"]']);
    assert.match((await configRow("learningRate").locator("th").textContent()) ?? "", /\(differs\)/, "said to screen readers, not only by colour");
    assert.equal(await page.getByTestId("compare-differences").textContent(), "2 config values differ.");
    const steps = page.locator("tr.summary", { has: page.locator("th", { hasText: /^Steps$/ }) });
    assert.deepEqual(await steps.locator("td").allTextContents(), [String(STEPS_A), String(STEPS_B)]);
    await screenshotBothThemes(page, "compare-runs");

    await page.getByLabel("Only differences").check();
    assert.deepEqual((await page.locator("tr[data-config-key]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-config-key")))).sort(), [
      "learningRate",
      "maxSteps",
    ]);
    await page.locator("table").scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "compare-runs-differences");

    // Zoom and log scale work here as on the job page.
    await page.getByTestId("compare-chart-log-scale").check();
    await page.locator("svg.plot").focus();
    await page.keyboard.press("+");
    await page.getByTestId("compare-chart-zoom").waitFor();
    assert.ok(pathVertexCount(await lossA.getAttribute("d")) < STEPS_A);
    // A run's name leads to its job page.
    await page.getByTestId("compare-run").first().getByRole("link").click();
    await page.waitForURL(new RegExp(`#/jobs/${a.id}$`));
    assert.deepEqual(consoleWatch.errors, []);
  });

  it("explains a compare link with fewer than two jobs", async () => {
    await openRoute(page, stack.studio.url, "#/compare?ids=only-one");
    assert.equal(await page.getByTestId("compare-problem").textContent(), "Pick at least 2 jobs to compare (you picked 1).");
    await page.getByRole("link", { name: "Jobs" }).last().click();
    await page.waitForURL(/#\/jobs$/);
  });
});
