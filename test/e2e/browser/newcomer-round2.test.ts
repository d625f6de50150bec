/**
 * Issue 31: the studio as a newcomer meets it, round 2, in a real browser against the real studio and a real
 * cloud, with the real CLI. Each test failed before its fix.
 * Screenshots go to test-results/screenshots/studio-newcomer-*.png.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import path from "node:path";
import type { Page } from "playwright-core";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { replaceOnce } from "../../support/text.js";
import { screenshotBothThemes, watchConsole } from "./support/pages.js";
import { copyQuickstart, projectClient, startStudioStack, studioRequest, type StudioStack } from "../../support/studioStack.js";
import { openRoute } from "./support/pages.js";
import { cliPath } from "../../support/cloud.js";
import type { JobConfig } from "../../../sdk/wire.js";
import { pollUntil } from "../../support/poll.js";

const STALE_LINE = "src/svc/index.ts changed since the last build: a run now trains the old build (.svc/build/index.mjs).";

describe("studio in the browser: a newcomer's first hour, round 2 (issue 31)", function () {
  this.timeout(180_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 0 }), launchChromium()]);
    page = browser.page;
    watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const svc = (dir: string, ...args: string[]) => spawnSync(process.execPath, [cliPath, ...args], { cwd: dir, encoding: "utf8", env: process.env });
  const editSource = (dir: string, from: string, to: string) => {
    const file = path.join(dir, "src", "svc", "index.ts");
    writeFileSync(file, replaceOnce(readFileSync(file, "utf8"), from, to));
  };
  const bundleText = (dir: string) => readFileSync(path.join(dir, ".svc", "build", "index.mjs"), "utf8");

  it("svc start says in one line that the sources changed since the build, and --rebuild trains the edits", async () => {
    const dir = copyQuickstart(await mkdtemp(path.join(stack.tmp.path, "cli-stale-")));
    assert.equal(svc(dir, "build").status, 0);
    editSource(dir, "learningRate: 3e-3", "learningRate: 7e-3");
    // A preview checks the datasets and trains nothing: enough to see which trainer `svc start` loaded.
    const stale = svc(dir, "start", "--dry-run", "--preview", "--json");
    assert.equal(stale.status, 0, stale.stdout + stale.stderr);
    const warnings = stale.stderr.split("\n").filter((line) => line.includes("changed since the last build"));
    assert.deepEqual(warnings, [`svc: ${STALE_LINE} Run \`svc start --rebuild\` to train your edits.`]);
    assert.match(bundleText(dir), /learningRate: 3e-3/, "without --rebuild the bundle is reused, as SPEC says");

    const rebuilt = svc(dir, "start", "--rebuild", "--dry-run", "--preview", "--json");
    assert.equal(rebuilt.status, 0, rebuilt.stdout + rebuilt.stderr);
    assert.doesNotMatch(rebuilt.stderr, /changed since the last build/);
    assert.match(bundleText(dir), /learningRate: 7e-3/);
    const again = svc(dir, "start", "--dry-run", "--preview", "--json");
    assert.doesNotMatch(again.stderr, /changed since the last build/, "an up-to-date build says nothing");
  });

  it("Overview: an edit after the build shows a banner whose Rebuild picks it up; reloading the panel rebuilds", async () => {
    const dir = copyQuickstart(await mkdtemp(path.join(stack.tmp.path, "ui-stale-")));
    const studio = await stack.studioFor(dir);
    const label = page.getByTestId("run-training-label");
    await page.goto(`${studio.url}/#/`);
    await label.getByText("Run training: quickstart-json-answers", { exact: true }).waitFor({ timeout: 60_000 });
    const banner = page.getByTestId("stale-build");
    assert.equal(await banner.count(), 0, "a fresh build shows no banner");

    editSource(dir, `name: "quickstart-json-answers"`, `name: "quickstart-edited"`);
    await banner.getByText(STALE_LINE).waitFor({ timeout: 15_000 });
    await screenshotBothThemes(page, "newcomer-stale-build-banner");
    await banner.getByRole("button", { name: "Rebuild" }).click();
    await label.getByText("Run training: quickstart-edited", { exact: true }).waitFor({ timeout: 60_000 });
    await banner.waitFor({ state: "detached" });
    assert.match(bundleText(dir), /quickstart-edited/);

    // Reloading the panel rebuilds (SPEC section 4): the label names the edited trainer, no banner.
    editSource(dir, `name: "quickstart-edited"`, `name: "quickstart-reloaded"`);
    await page.reload();
    await label.getByText("Run training: quickstart-reloaded", { exact: true }).waitFor({ timeout: 60_000 });
    assert.equal(await banner.count(), 0);
  });

  it("runs of one trainer can be told apart: short id and differing config by eye, in accessible names too", async () => {
    // The project scope, then three runs of one trainer that differ only in their learning rate (listed, not trained).
    const scope = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "tell-apart", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" },
    });
    assert.equal(scope.status, 201, scope.text);
    const client = projectClient(stack);
    const dataset = await client.uploadDataset("train.jsonl", readFileSync(path.join(stack.projectDir, "data", "train.jsonl")));
    const config: JobConfig = {
      name: "same-name",
      model: "svc-tiny",
      maxSteps: 1,
      batchSize: 1,
      evalSteps: 0,
      saveSteps: 0,
      seed: 1,
      schedule: "cosine",
      lora: { r: 2, alpha: 4, targetModules: ["q_proj"] },
    };
    const rates = [0.001, 0.002, 0.003];
    const jobs = [];
    for (const learningRate of rates) {
      const job = await client.createJob({ name: "same-name", config: { ...config, learningRate }, datasetId: dataset.id });
      jobs.push(await client.cancelJob(job.id));
    }

    await openRoute(page, stack.studio.url, "#/");
    const rows = page.getByTestId("recent-jobs").locator("li");
    await rows.first().waitFor({ timeout: 15_000 });
    for (const [i, job] of jobs.entries()) {
      const row = page.getByTestId("recent-jobs").locator(`li[data-job-id="${job.id}"]`);
      assert.equal(await row.getByTestId("recent-job-detail").textContent(), `${job.id.slice(0, 8)} · learningRate ${rates[i]}`);
      const name = await row.getByRole("link").getAttribute("aria-label");
      assert.match(name!, new RegExp(`^same-name, ${job.id.slice(0, 8)}, created .+, learningRate ${rates[i]}$`));
    }
    await screenshotBothThemes(page, "newcomer-recent-jobs-distinct");

    await openRoute(page, stack.studio.url, "#/jobs");
    const boxes = page.getByTestId("compare-select");
    await pollUntilCount(() => boxes.count(), jobs.length);
    const boxNames = await boxes.evaluateAll((els) => els.map((el) => el.getAttribute("aria-label")));
    assert.equal(new Set(boxNames).size, boxNames.length, `checkbox names differ: ${boxNames.join(" | ")}`);
    for (const job of jobs) await page.getByRole("checkbox", { name: `Select same-name, ${job.id.slice(0, 8)}, created`, exact: false }).waitFor();

    await openRoute(page, stack.studio.url, `#/compare?ids=${jobs.map((j) => j.id).join(",")}`);
    const columns = page.getByTestId("compare-column");
    await columns.first().waitFor();
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="compare-column"]').length === n, jobs.length);
    // A column shows the job's id until the job itself has loaded: read the headers once every name is in.
    const expected = jobs.map((j) => `same-name ${j.id.slice(0, 8)}`);
    let headers: string[] = [];
    await pollUntil(
      async () => {
        headers = (await columns.allTextContents()).map((t) => t.replace(/\s+/g, " ").trim());
        return headers.every((header) => header.startsWith("same-name "));
      },
      { timeoutMs: 15_000, description: `compare columns named after their jobs (last read: ${headers.join(" | ")})` },
    ).catch(() => undefined);
    assert.deepEqual(headers, expected);
    await screenshotBothThemes(page, "newcomer-compare-columns");
  });

  it("the create-endpoint hint shows the URL the slug typed gets, not `<slug>.<deploy domain>`", async () => {
    const existing = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "hint-host", target: { kind: "base_model", name: "svc-tiny" }, authMode: "none" },
    });
    assert.equal(existing.status, 201, existing.text);
    const domain = new URL(existing.json.url as string).host.slice("hint-host.".length);
    await openRoute(page, stack.studio.url, "#/endpoints");
    await page.getByRole("list", { name: "Endpoints" }).getByText("hint-host").waitFor();
    await page.locator("vscode-button", { hasText: "New endpoint" }).click();
    await page.getByRole("textbox", { name: "Slug" }).fill("my-bot");
    const help = page.locator("#slug-help");
    assert.equal(
      (await help.textContent())!.replace(/\s+/g, " ").trim(),
      `The endpoint is served at my-bot.${domain}; the slug stays reserved even while disabled.`,
    );
    await screenshotBothThemes(page, "newcomer-create-endpoint-hint");
  });

  it("after issuing a key, the Quick start offers to fill it in; YOUR_API_KEY stays the default", async () => {
    const created = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "fill-key", target: { kind: "base_model", name: "svc-tiny" }, authMode: "fixed_api_key" },
    });
    assert.equal(created.status, 201, created.text);
    await openRoute(page, stack.studio.url, `#/endpoints/${created.json.id}`);
    const code = page.getByTestId("quickstart-code");
    await code.getByText("YOUR_API_KEY", { exact: false }).waitFor();
    const fill = page.getByRole("checkbox", { name: "Fill in the key just issued" });
    assert.equal(await fill.count(), 0, "nothing to fill in before a key is issued");
    await page.locator('input[name="label"]').fill("laptop");
    await page.locator("vscode-button", { hasText: "Issue key" }).click();
    await page.getByTestId("issued-key-plaintext").waitFor();
    const key = (await page.getByTestId("issued-key-plaintext").textContent())!.trim();
    assert.match((await code.textContent())!, /Bearer YOUR_API_KEY/, "the SPEC's sample stays the default");
    await fill.check();
    const sample = (await code.textContent())!;
    assert.ok(sample.includes(`Bearer ${key}`), sample);
    assert.doesNotMatch(sample, /YOUR_API_KEY/);
    await screenshotBothThemes(page, "newcomer-quickstart-key");
  });
});

async function pollUntilCount(count: () => Promise<number>, expected: number): Promise<void> {
  const { pollUntil } = await import("../../support/poll.js");
  await pollUntil(async () => ((await count()) >= expected ? true : undefined), { timeoutMs: 15_000, description: `${expected} rows` });
}

describe("studio in the browser: a trained run as a newcomer reads it (issue 31)", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 1, maxSteps: 4, evalSteps: 2, saveSteps: 2 }), launchChromium()]);
    page = browser.page;
    watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it("Run training's log says how training started in words, not JSON; the count says `1 job`", async () => {
    await openRoute(page, stack.studio.url, "#/");
    await page.getByTestId("run-training-label").getByText("Run training: quickstart-json-answers").waitFor({ timeout: 60_000 });
    await page.locator("vscode-button", { hasText: "Run training" }).click();
    await page.getByText("The run finished.").waitFor({ timeout: 120_000 });
    const text = (await page.getByLabel("Training output").textContent())!;
    assert.match(text, /^training started: svc-tiny on \S+, .+, \d+ training and \d+ eval examples$/m, text);
    assert.doesNotMatch(text, /^\{/m, "no raw JSON line");
    await screenshotBothThemes(page, "newcomer-run-log");

    await openRoute(page, stack.studio.url, "#/jobs");
    await page.locator(".count").getByText("1 job", { exact: true }).waitFor({ timeout: 15_000 });
  });

  it("Recent jobs says running as soon as the run's steps stream, not queued until its next poll", async () => {
    const dir = copyQuickstart(await mkdtemp(path.join(stack.tmp.path, "chip-")), { maxSteps: 5000 });
    const studio = await stack.studioFor(dir);
    await page.goto(`${studio.url}/#/`);
    await page.getByTestId("run-training-label").getByText("Run training: quickstart-json-answers").waitFor({ timeout: 60_000 });
    await page.locator("vscode-button", { hasText: "Run training" }).click();
    await page
      .getByLabel("Training output")
      .getByText(/^step=1 /m)
      .waitFor({ timeout: 120_000 });
    // Well inside the card's 5 s poll: only a reload on the first step can show it.
    await page.getByTestId("recent-jobs").locator('[data-status="running"]').waitFor({ timeout: 1_500 });
    const stopped = await studioRequest(studio, "DELETE", "/api/train");
    assert.equal(stopped.status, 200, stopped.text);
  });

  it("the studio's Stop (SIGTERM) cancels without CLI wording; Ctrl-C keeps its hint", async () => {
    const dir = copyQuickstart(await mkdtemp(path.join(stack.tmp.path, "stop-")), { maxSteps: 5000 });
    const child = spawn(process.execPath, [cliPath, "start"], { cwd: dir, env: process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
    const { pollUntil } = await import("../../support/poll.js");
    await pollUntil(async () => (/job \S+ queued/.test(stdout) ? true : undefined), { timeoutMs: 60_000, description: "the job to be queued" });
    child.kill("SIGTERM");
    await exited;
    assert.equal(
      stderr.split("\n").find((line) => line.startsWith("svc: cancelling")),
      "svc: cancelling the job",
    );
  });
});
