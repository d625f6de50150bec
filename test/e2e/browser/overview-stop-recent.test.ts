/**
 * Overview beyond the spec (issue 12): Stop for the run in flight (it ends `svc start`, which
 * cancels its job, whichever tab started the run) and the Recent jobs card (the last five jobs,
 * each linking to its Job detail). Real browser, real studio, real cloud with one training worker.
 * Screenshots: test-results/screenshots/studio-overview-*.png.
 */
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { CloudClient } from "../../../sdk/client.js";
import { readProjectState } from "../../../sdk/state.js";
import type { Job, JobConfig } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { copyQuickstart, startStudioStack, studioRequest, type StudioStack } from "../../support/studioStack.js";
import { replaceOnce } from "../../support/text.js";

describe("studio in the browser: Overview's Stop and Recent jobs", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;

  const jobs = async () => (await studioRequest(stack.studio, "GET", "/api/jobs")).json as Job[];
  const jobStatus = async (id: string) => ((await studioRequest(stack.studio, "GET", `/api/jobs/${id}`)).json as Job).status;
  const runInFlight = async () => (await studioRequest(stack.studio, "GET", "/api/train")).json.running as boolean;
  const recentRows = () => page.getByTestId("recent-jobs").locator("li");

  before(async () => {
    // Thousands of steps: the runs below are stopped long before they could finish.
    [stack, browser] = await Promise.all([startStudioStack({ workers: 1, maxSteps: 5000 }), launchChromium()]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("with no jobs, Recent jobs says so and Stop is absent; DELETE /api/train with nothing in flight changes nothing", async () => {
    const idle = await studioRequest(stack.studio, "DELETE", "/api/train");
    assert.equal(idle.status, 200, idle.text);
    assert.equal(idle.json.running, false);
    await openRoute(page, stack.studio.url, "#/");
    await page.getByTestId("recent-jobs-empty").waitFor();
    assert.equal(await page.getByTestId("recent-jobs-empty").textContent(), "No jobs yet. Run training above; its job appears here.");
    assert.equal(await page.getByTestId("stop-training").count(), 0);
    await page.getByTestId("run-training-label").getByText("Run training: quickstart-json-answers").waitFor();
    await screenshotBothThemes(page, "overview-no-jobs");
  });

  it("Stop ends the run this page started: svc start cancels its job, the card shows it cancelled, Run training comes back", async () => {
    await page.locator("vscode-button", { hasText: "Run training" }).click();
    const console = page.getByLabel("Training output");
    await console.getByText(/job \S+ queued: quickstart-json-answers/).waitFor({ timeout: 60_000 });
    const jobId = /job (\S+) queued/.exec((await console.textContent())!)![1];
    // The new job is on the card at once (the panel tells it), before the 5 s poll.
    const row = page.getByTestId("recent-jobs").locator(`li[data-job-id="${jobId}"]`);
    await row.waitFor({ timeout: 4000 });
    assert.equal(await row.getByRole("link").getAttribute("href"), `#/jobs/${jobId}`);
    await console
      .getByText(/step=\d+ loss=/)
      .first()
      .waitFor({ timeout: 90_000 });
    await screenshotBothThemes(page, "overview-running-before-stop");

    await page.getByTestId("stop-training").click();
    const confirm = page.getByTestId("stop-training-confirm");
    assert.equal(await confirm.getAttribute("role"), "group");
    await screenshotBothThemes(page, "overview-stop-confirm");
    await confirm.locator("vscode-button", { hasText: "Stop run" }).click();

    await page.getByTestId("run-stopped").waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId("run-stopped").textContent(), "The run was stopped; its job was cancelled.");
    assert.match((await console.textContent())!, /svc: cancelling the job/, "svc start took it as Ctrl-C");
    assert.match((await console.textContent())!, new RegExp(`job ${jobId} cancelled`));
    assert.equal(await jobStatus(jobId), "cancelled");
    assert.equal(await runInFlight(), false);
    await row.locator('[data-status="cancelled"]').waitFor({ timeout: 10_000 });
    assert.equal(await page.getByRole("alert").count(), 0, "a stop is not an error");
    assert.equal(await page.getByTestId("stop-training").count(), 0);
    assert.equal(await page.locator("vscode-button", { hasText: "Run training" }).getAttribute("disabled"), null);
    await screenshotBothThemes(page, "overview-stopped");
  });

  it("Stop ends a run another tab started, from the keyboard (Enter, Enter)", async () => {
    const started = await fetch(`${stack.studio.url}/api/train`, { method: "POST", headers: { "x-svc-studio-token": stack.studio.token } });
    assert.equal(started.status, 200);
    const output = started.text();
    const jobId = await pollUntil(async () => (await jobs()).find((j) => j.status === "running" || j.status === "queued")?.id, {
      timeoutMs: 60_000,
      description: "the other tab's job",
    });
    await page.reload();
    await page.getByTestId("run-elsewhere").waitFor();
    await page.getByTestId("stop-training").focus();
    await page.keyboard.press("Enter");
    // The confirmation takes the focus, so a second Enter confirms.
    await pollUntil(() => page.evaluate(() => document.activeElement?.textContent?.trim() === "Stop run"), {
      timeoutMs: 5000,
      description: "focus on Stop run",
    });
    await page.keyboard.press("Enter");
    assert.match(await output, new RegExp(`job ${jobId} cancelled\\n$`), "that tab's svc start ended after cancelling its job");
    await page.getByTestId("run-stopped").waitFor({ timeout: 30_000 });
    assert.equal(await page.getByTestId("run-elsewhere").count(), 0);
    assert.equal(await jobStatus(jobId), "cancelled");
  });

  it("Recent jobs lists the five newest, newest first, each linking to its Job detail", async () => {
    const state = await readProjectState(stack.projectDir);
    assert.ok(state, "the runs above created the project scope");
    const { token } = JSON.parse(readFileSync(path.join(process.env.SVC_HOME!, "credentials.json"), "utf8"));
    const client = new CloudClient({ baseUrl: stack.cloud.cloudUrl, token, projectId: state.projectId });
    const dataset = await client.uploadDataset("train.jsonl", readFileSync(path.join(stack.projectDir, "data", "train.jsonl")));
    const config: JobConfig = {
      name: "x",
      model: "svc-tiny",
      maxSteps: 1,
      learningRate: 1e-3,
      batchSize: 1,
      evalSteps: 0,
      saveSteps: 0,
      seed: 1,
      schedule: "cosine",
      lora: { r: 2, alpha: 4, targetModules: ["q_proj"] },
    };
    const created: Job[] = [];
    for (let i = 1; i <= 6; i++) {
      const job = await client.createJob({ name: `recent-${i}`, config: { ...config, name: `recent-${i}` }, datasetId: dataset.id });
      created.push(await client.cancelJob(job.id)); // listed, not trained
    }
    await openRoute(page, stack.studio.url, "#/jobs");
    await openRoute(page, stack.studio.url, "#/");
    const expected = created
      .slice(1)
      .reverse()
      .map((j) => j.name);
    await pollUntil(async () => JSON.stringify(await recentRows().getByRole("link").allTextContents()) === JSON.stringify(expected), {
      timeoutMs: 15_000,
      description: `the card to list ${expected.join(", ")}`,
    });
    for (const row of await recentRows().all()) assert.equal(await row.locator('[data-status="cancelled"]').count(), 1);
    await page.getByTestId("run-training-label").getByText("Run training: quickstart-json-answers").waitFor();
    await screenshotBothThemes(page, "overview-recent-jobs");

    await recentRows().getByRole("link", { name: "recent-6" }).click();
    assert.equal(new URL(page.url()).hash, `#/jobs/${created[5].id}`);
    await page.getByRole("heading", { name: "recent-6" }).waitFor();
    assert.deepEqual(consoleWatch.errors, []);
  });

  it("Run training of a trainer with dryRun: true shows the dry run's report and says nothing was trained", async () => {
    const jobsBefore = (await jobs()).length;
    const into = path.join(stack.tmp.path, "dry");
    mkdirSync(into, { recursive: true });
    const dir = copyQuickstart(into);
    const source = path.join(dir, "src", "svc", "index.ts");
    writeFileSync(source, replaceOnce(readFileSync(source, "utf8"), "  seed: 42,\n", "  seed: 42,\n  dryRun: true,\n"));
    const studio = await stack.studioFor(dir);
    await page.goto(`${studio.url}/#/`);
    await page.getByTestId("run-training-label").getByText("Run training: quickstart-json-answers").waitFor({ timeout: 60_000 });
    await page.locator("vscode-button", { hasText: "Run training" }).click();
    await page.getByText("The dry run finished: nothing was uploaded and no job was created.").waitFor({ timeout: 90_000 });
    const output = (await page.getByLabel("Training output").textContent())!;
    assert.match(output, /dry run of "quickstart-json-answers" on svc-tiny/);
    assert.match(output, /train {2}data\/train\.jsonl: 137 conversations/);
    assert.match(output, /ok: svc start would upload these datasets and train/);
    assert.equal(await page.getByRole("alert").count(), 0);
    await screenshotBothThemes(page, "overview-dry-run");
    assert.equal((await jobs()).length, jobsBefore, "no job was created");
  });
});
