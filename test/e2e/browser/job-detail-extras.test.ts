/**
 * Job detail beyond the spec (issue 12): chart zoom (drag, double-click, keyboard), log scale,
 * EMA smoothing with the raw line kept faint, learning rate and tokens/s plots, CSV / JSON
 * download of the series, Duration and Base model in Metadata, and Open in Playground. Real
 * browser, real studio, real cloud with one training worker, and a real training run of a copy of
 * examples/quickstart, made on first use so any test also runs alone (--grep).
 * Screenshots go to test-results/screenshots/studio-job-*.png, light and dark.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import type { Locator, Page } from "playwright-core";
import type { Job, JobEvent } from "../../../sdk/wire.js";
import { launchChromium, waitForText, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, pathVertexCount, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { projectClient, startStudioStack, trainThroughStudio, type StudioStack } from "../../support/studioStack.js";

const STEPS = 30;

describe("studio job detail: zoom, log scale, smoothing, more series, downloads, metadata (issue 12)", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;
  let completed: Promise<Job> | undefined;

  before(async () => {
    [stack, browser] = await Promise.all([
      startStudioStack({ workers: 1, maxSteps: STEPS, evalSteps: 10, saveSteps: 10 }),
      launchChromium({ viewport: { width: 1280, height: 1000 } }),
    ]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const completedJob = () => (completed ??= trainThroughStudio(stack.studio));

  /** The job's training.log payloads as the cloud stored them (what the page must show and export). */
  async function trainingLogs(jobId: string): Promise<Record<string, number>[]> {
    const response = await fetch(`${stack.studio.url}/api/jobs/${jobId}/events?studioToken=${stack.studio.token}`);
    const text = await response.text();
    const logs: Record<string, number>[] = [];
    for (const frame of text.split("\n\n")) {
      if (!frame.includes("event: training.log")) continue;
      const data = /^data: (.*)$/m.exec(frame)?.[1];
      if (data) logs.push(JSON.parse(data) as JobEvent["data"] as Record<string, number>);
    }
    return logs;
  }

  async function openJob(job: Job): Promise<Locator> {
    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    const loss = page.locator('path[data-series="loss"]');
    await pollUntil(async () => (pathVertexCount(await loss.getAttribute("d", { timeout: 1000 }).catch(() => null)) === STEPS ? true : undefined), {
      timeoutMs: 30_000,
      description: "the whole loss series",
    });
    return loss;
  }

  const zoomBadge = () => page.getByTestId("job-chart-zoom");

  it("zooms into a dragged step range, back out on double-click, and by keyboard (+, −, 0)", async () => {
    const job = await completedJob();
    const loss = await openJob(job);
    const plot = page.locator("svg.plot");
    const box = (await plot.boundingBox())!;
    // Drag across the middle third of the plotting area.
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.7, box.y + box.height / 2, { steps: 6 });
    await page.getByTestId("zoom-selection").waitFor();
    await page.mouse.up();
    await zoomBadge().waitFor();
    const window = /Steps (\d+)–(\d+)/.exec((await zoomBadge().textContent()) ?? "");
    assert.ok(window, "the badge names the step range");
    const [from, to] = [Number(window[1]), Number(window[2])];
    assert.ok(from > 1 && to < STEPS && from < to, `a window inside the run: ${from}-${to}`);
    // The points inside plus one neighbour on each side, so the line reaches the edges.
    const inside = pathVertexCount(await loss.getAttribute("d"));
    assert.ok(inside < STEPS && inside >= to - from, `${inside} vertices drawn for steps ${from}-${to}`);
    // Hover reads only steps in the window.
    await page.mouse.move(box.x + box.width - 20, box.y + box.height / 2);
    const hovered = Number(/Step (\d+)/.exec((await page.locator(".readout").first().textContent()) ?? "")?.[1]);
    assert.ok(hovered >= from && hovered <= to, `hover at the right edge reads step ${hovered}`);
    await screenshotBothThemes(page, "job-zoomed");

    await plot.dblclick({ position: { x: box.width / 2, y: box.height / 2 } });
    await zoomBadge().waitFor({ state: "detached" });
    assert.equal(pathVertexCount(await loss.getAttribute("d")), STEPS, "every step again");

    // Keyboard only: focus the chart, put the cursor on a step, zoom in twice around it, out once, reset.
    await plot.focus();
    await page.keyboard.press("Home");
    for (let i = 0; i < 10; i++) await page.keyboard.press("ArrowRight");
    assert.equal(await plot.getAttribute("aria-valuenow"), "11");
    assert.match((await plot.getAttribute("aria-valuetext")) ?? "", /^Step 11, loss \d+\.\d{4}/);
    await page.keyboard.press("+");
    await zoomBadge().waitFor();
    const once = (await zoomBadge().textContent()) ?? "";
    await page.keyboard.press("+");
    await pollUntil(async () => ((await zoomBadge().textContent()) !== once ? true : undefined), { timeoutMs: 5000, description: "a closer zoom" });
    assert.ok(pathVertexCount(await loss.getAttribute("d")) < STEPS / 2);
    await page.keyboard.press("Shift+ArrowRight");
    await page.keyboard.press("-");
    await page.keyboard.press("0");
    await zoomBadge().waitFor({ state: "detached" });
    assert.equal(pathVertexCount(await loss.getAttribute("d")), STEPS);
    // The Reset zoom button does the same, from the keyboard too.
    await plot.focus();
    await page.keyboard.press("+");
    await zoomBadge().getByRole("button", { name: "Reset zoom" }).press("Enter");
    await zoomBadge().waitFor({ state: "detached" });
  });

  it("log scale and EMA smoothing keep SPEC's chart rules: solid training loss, dashed eval with markers", async () => {
    const job = await completedJob();
    const loss = await openJob(job);
    const evalPoints = (await trainingLogs(job.id)).filter((d) => typeof d.evalLoss === "number").length;
    assert.ok(evalPoints > 0);
    const evalPath = page.locator('path[data-series="evalLoss"]');
    // The y ticks (label and height): a log axis spaces the same values differently.
    const yTicks = () =>
      page.locator('svg.plot text.tick[text-anchor="end"]').evaluateAll((els) => els.map((el) => `${el.textContent}@${el.getAttribute("y")}`).join(" "));
    const linear = await yTicks();
    await page.getByTestId("job-chart-log-scale").check();
    await pollUntil(async () => ((await yTicks()) !== linear ? true : undefined), { timeoutMs: 5000, description: "log-scale ticks" });
    assert.equal(pathVertexCount(await loss.getAttribute("d")), STEPS, "every point on the log scale (losses are positive)");
    assert.equal(pathVertexCount(await evalPath.getAttribute("d")), evalPoints);
    assert.equal(await page.locator('circle[data-series="evalLoss"]').count(), evalPoints, "eval markers stay");
    assert.equal(await page.getByTestId("eval-legend").count(), 1);

    const slider = page.getByTestId("job-chart-smoothing");
    await slider.focus();
    for (let i = 0; i < 60; i++) await page.keyboard.press("ArrowRight"); // 0.60, by keyboard
    assert.equal(await slider.inputValue(), "0.6");
    const smoothed = page.locator('path[data-series="loss-smoothed"]');
    await smoothed.waitFor();
    assert.equal(pathVertexCount(await smoothed.getAttribute("d")), STEPS);
    assert.notEqual(await smoothed.getAttribute("d"), await loss.getAttribute("d"));
    assert.match((await loss.getAttribute("class")) ?? "", /\bfaint\b/, "the raw line stays, faint");
    assert.equal(await page.locator('path[data-series="evalLoss-smoothed"]').count(), 0, "eval loss is drawn as logged");
    const dash = await evalPath.evaluate((el) => getComputedStyle(el).strokeDasharray);
    assert.notEqual(dash, "none", "eval stays dashed");
    assert.equal(await loss.evaluate((el) => getComputedStyle(el).strokeDasharray), "none", "training loss stays solid");
    await page.locator("svg.plot").hover();
    await screenshotBothThemes(page, "job-log-smoothed");

    await page.getByTestId("job-chart-log-scale").uncheck();
    await slider.fill("0");
    await smoothed.waitFor({ state: "detached" });
    assert.doesNotMatch((await loss.getAttribute("class")) ?? "", /\bfaint\b/);
  });

  it("shows learning rate and tokens/s as optional plots sharing the step axis and the cursor", async () => {
    const job = await completedJob();
    await openJob(job);
    const logs = await trainingLogs(job.id);
    // Token accuracy shows by default (its own test below); this one is about the other two.
    await page.getByTestId("show-token-accuracy").uncheck();
    assert.equal(await page.locator("svg.small-plot").count(), 0, "off by default");
    await page.getByTestId("show-learning-rate").check();
    await page.getByTestId("show-tokens-per-second").check();
    await page.locator('path[data-series="learningRate"]').waitFor();
    assert.equal(pathVertexCount(await page.locator('path[data-series="learningRate"]').getAttribute("d")), STEPS);
    assert.equal(pathVertexCount(await page.locator('path[data-series="tokensPerSecond"]').getAttribute("d")), STEPS);

    // The cursor moved on the main plot reads every shown series at that step.
    const plot = page.locator("svg.plot");
    await plot.focus();
    await page.keyboard.press("End");
    const last = logs[logs.length - 1];
    const text = (await plot.getAttribute("aria-valuetext")) ?? "";
    assert.match(text, new RegExp(`^Step ${STEPS}, loss ${last.loss.toFixed(4)}`));
    assert.ok(text.includes(`lr ${last.learningRate.toExponential(2)}`), text);
    assert.ok(text.includes(`${Math.round(last.tokensPerSecond).toLocaleString("en-US")} tokens/s`), text);
    assert.equal(await page.locator("svg.small-plot line.cursor").count(), 2, "both small plots show the cursor");

    // A zoom from the small plot zooms every plot.
    const small = (await page.locator("svg.small-plot").first().boundingBox())!;
    await page.mouse.move(small.x + small.width * 0.3, small.y + small.height / 2);
    await page.mouse.down();
    await page.mouse.move(small.x + small.width * 0.6, small.y + small.height / 2, { steps: 4 });
    await page.mouse.up();
    await zoomBadge().waitFor();
    assert.ok(pathVertexCount(await page.locator('path[data-series="loss"]').getAttribute("d")) < STEPS);
    await screenshotBothThemes(page, "job-more-series");
    await page.locator("svg.plot").dblclick();
  });

  it("draws training and eval token accuracy under the loss by default, as logged, and hides them on request", async () => {
    const job = await completedJob();
    await openJob(job);
    const logs = await trainingLogs(job.id);
    // On by default; an earlier test on this page may have hidden it (the page keeps the choice).
    await page.getByTestId("show-token-accuracy").check();
    const accuracy = page.locator('path[data-series="tokenAccuracy"]');
    await accuracy.waitFor();
    assert.equal(pathVertexCount(await accuracy.getAttribute("d")), STEPS);
    const evalPoints = logs.filter((l) => typeof l.evalTokenAccuracy === "number").length;
    assert.ok(evalPoints > 0);
    assert.equal(await page.locator('circle[data-series="evalTokenAccuracy"]').count(), evalPoints);
    assert.notEqual(
      await page.locator('path[data-series="evalTokenAccuracy"]').evaluate((el) => getComputedStyle(el).strokeDasharray),
      "none",
      "eval accuracy is dashed",
    );
    const plot = page.locator("svg.plot");
    await plot.focus();
    await page.keyboard.press("End");
    const last = logs[logs.length - 1];
    const text = (await plot.getAttribute("aria-valuetext")) ?? "";
    assert.ok(text.includes(`accuracy ${(last.tokenAccuracy * 100).toFixed(1)}%`), text);
    assert.ok(text.includes(`eval accuracy ${(last.evalTokenAccuracy * 100).toFixed(1)}%`), text);
    await screenshotBothThemes(page, "job-token-accuracy");
    await page.getByTestId("show-token-accuracy").uncheck();
    await accuracy.waitFor({ state: "detached" });
    await page.getByTestId("show-token-accuracy").check();
  });

  it("marks the best adapter by eval loss, and the create-endpoint form offers the best checkpoint first", async () => {
    const job = await completedJob();
    await openJob(job);
    const logs = await trainingLogs(job.id);
    const evalAt = new Map(logs.filter((l) => typeof l.evalLoss === "number").map((l) => [l.step, l.evalLoss]));
    const saved = [10, 20, STEPS];
    const lowest = (steps: number[]) => steps.reduce((best, s) => (evalAt.get(s)! < evalAt.get(best)! ? s : best));
    const best = page.getByTestId("best-adapter");
    await best.waitFor();
    assert.equal(await best.count(), 1);
    const row = page.getByTestId("adapter-download").filter({ has: best });
    const bestStep = lowest(saved);
    assert.equal(await row.getAttribute("data-step"), bestStep === STEPS ? "final" : String(bestStep));
    assert.equal(await best.textContent(), `Best · eval loss ${evalAt.get(bestStep)!.toFixed(4)}`);
    await page.getByTestId("adapter-files").scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "job-best-adapter");

    await openRoute(page, stack.studio.url, "#/endpoints");
    await page.locator("vscode-button", { hasText: "New endpoint" }).click();
    await page.getByRole("radio", { name: "Checkpoint" }).check();
    // The worker also saves a checkpoint at the last step when saveSteps divides it.
    const bestCheckpoint = lowest(saved);
    const select = page.getByTestId("checkpoint-step");
    await pollUntil(
      async () =>
        (await select.inputValue()) === String(bestCheckpoint) && (await select.locator("option:checked").textContent())?.includes("best") ? true : undefined,
      {
        timeoutMs: 10_000,
        description: `checkpoint ${bestCheckpoint} offered first, marked best`,
      },
    );
    assert.equal(await select.locator("option:checked").textContent(), `Step ${bestCheckpoint} (best: eval loss ${evalAt.get(bestCheckpoint)!.toFixed(4)})`);
  });

  it("downloads every series as CSV and JSON, raw values, one row per step", async () => {
    const job = await completedJob();
    await openJob(job);
    const logs = await trainingLogs(job.id);
    // Smoothing and zoom change the view, not the export.
    await page.getByTestId("job-chart-smoothing").fill("0.9");

    const [csvDownload] = await Promise.all([page.waitForEvent("download"), page.getByTestId("download-csv").click()]);
    assert.equal(csvDownload.suggestedFilename(), `quickstart-json-answers-${job.id.slice(0, 8)}-metrics.csv`);
    const csv = (await readFile((await csvDownload.path())!, "utf8")).trimEnd().split("\n");
    assert.equal(csv[0], "step,loss,evalLoss,learningRate,tokensPerSecond,tokenAccuracy,evalTokenAccuracy");
    assert.equal(csv.length - 1, logs.length, "one row per logged step");
    for (const [i, log] of logs.entries()) {
      const cells = csv[i + 1].split(",");
      assert.equal(Number(cells[0]), log.step);
      assert.equal(Number(cells[1]), log.loss, `loss at step ${log.step}, full precision`);
      assert.equal(cells[2], typeof log.evalLoss === "number" ? String(log.evalLoss) : "", `evalLoss at step ${log.step}`);
      assert.equal(Number(cells[3]), log.learningRate);
      assert.equal(Number(cells[4]), log.tokensPerSecond);
      assert.equal(Number(cells[5]), log.tokenAccuracy, `tokenAccuracy at step ${log.step}`);
      assert.equal(cells[6], typeof log.evalTokenAccuracy === "number" ? String(log.evalTokenAccuracy) : "", `evalTokenAccuracy at step ${log.step}`);
    }

    await page.getByTestId("download-json").focus();
    const [jsonDownload] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")]);
    assert.equal(jsonDownload.suggestedFilename(), `quickstart-json-answers-${job.id.slice(0, 8)}-metrics.json`);
    const json = JSON.parse(await readFile((await jsonDownload.path())!, "utf8"));
    assert.deepEqual(json.job, { id: job.id, name: "quickstart-json-answers" });
    assert.deepEqual(
      json.rows.map((r: { step: number }) => r.step),
      logs.map((l) => l.step),
    );
    assert.deepEqual(json.rows[0], {
      step: logs[0].step,
      loss: logs[0].loss,
      learningRate: logs[0].learningRate,
      tokensPerSecond: logs[0].tokensPerSecond,
      tokenAccuracy: logs[0].tokenAccuracy,
    });
    await page.getByTestId("job-chart-smoothing").fill("0");
  });

  it("Metadata shows Duration and Base model; Open in Playground picks the job's adapter", async () => {
    const job = await completedJob();
    await openJob(job);
    await waitForText(page.getByTestId("base-model"), "svc-tiny");
    const seconds = (Date.parse(job.finishedAt!) - Date.parse(job.startedAt!)) / 1000;
    const duration = (await page.getByTestId("job-duration").textContent()) ?? "";
    const expected =
      seconds < 60 ? `${Math.round(seconds)} s` : `${Math.floor(Math.round(seconds) / 60)} min ${String(Math.round(seconds) % 60).padStart(2, "0")} s`;
    assert.equal(duration, expected);
    await page.locator("aside.sidebar").scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "job-metadata");

    await page.getByTestId("open-playground").focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(/#\/playground\?job=/);
    assert.equal(new URL(page.url()).hash, `#/playground?job=${job.id}`);
    const select = page.getByLabel("Completed job", { exact: true });
    await pollUntil(async () => ((await select.inputValue()) === job.id ? true : undefined), { timeoutMs: 10_000, description: "the job's adapter chosen" });
    await page
      .getByRole("radio", { name: "Final adapter" })
      .isChecked()
      .then((checked) => assert.ok(checked));
    await screenshotBothThemes(page, "job-open-in-playground");
  });

  it("offers Open in Playground only for completed jobs", async () => {
    await completedJob(); // the worker is free for the next one
    // A job with no dataset: the worker fails it at once. Made through the cloud, as no UI does that.
    const failed = await projectClient(stack).createJob({ name: "no-dataset", config: { model: "svc-tiny", maxSteps: 1 } });
    await openRoute(page, stack.studio.url, `#/jobs/${failed.id}`);
    await page.getByTestId("failure-banner").waitFor({ timeout: 60_000 });
    // The stream's failure can show before GET /jobs/:id answers; the base model comes with the latter.
    await waitForText(page.getByTestId("base-model"), "svc-tiny");
    assert.equal(await page.getByTestId("open-playground").count(), 0, "no adapter to chat with");
    assert.deepEqual(consoleWatch.errors, []);
  });
});
