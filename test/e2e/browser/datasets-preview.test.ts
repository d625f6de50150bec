/**
 * The Datasets view `#/datasets` (issue 12): the project's train and eval JSONL before a run, as `svc start --dry-run
 * --preview` reads them through the real studio and a real cloud (its model list): counts, a histogram of lengths in
 * tokens against the limit, problems with their line numbers, the first conversations. Each test copies
 * examples/quickstart into a project of its own, so each also runs alone. Screenshots: studio-datasets-*.png.
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import type { StudioServer } from "../../../studio/index.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { BROKEN_SOURCE, NO_TRAINER_SOURCE, copyQuickstart, startStudioStack, writeProject, type StudioStack } from "../../support/studioStack.js";

const chat = (user: string, assistant: string) =>
  JSON.stringify({
    messages: [
      { role: "user", content: user },
      { role: "assistant", content: assistant },
    ],
  });

describe("studio Datasets view (issue 12)", function () {
  this.timeout(180_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;

  before(async () => {
    [stack, browser] = await Promise.all([startStudioStack({ workers: 0 }), launchChromium({ viewport: { width: 1280, height: 1100 } })]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  /** A fresh copy of the quickstart under `name`, its own studio, and (optionally) its train.jsonl replaced. */
  async function project(name: string, trainLines?: string[]): Promise<{ studio: StudioServer; dir: string }> {
    const dir = copyQuickstart(path.join(stack.tmp.path, name));
    if (trainLines) writeFileSync(path.join(dir, "data", "train.jsonl"), trainLines.join("\n") + "\n");
    return { studio: await stack.studioFor(dir), dir };
  }

  const split = (name: "train" | "eval") => page.getByTestId(`dataset-${name}`);

  it("from Overview: counts, every length in the histogram under the limit, the first conversations, by keyboard too", async () => {
    const { studio, dir } = await project("clean");
    await openRoute(page, studio.url, "#/");
    await page.getByRole("link", { name: "Datasets", exact: true }).first().waitFor();
    await page.locator(".next").getByRole("link", { name: "Datasets" }).click();
    await page.waitForURL(/#\/datasets$/);
    await page
      .getByTestId("preview-verdict")
      .getByText(/^Ready to train: svc start would upload these datasets and train 60 steps at batch 8 \(3\.5 epochs\)\.$/)
      .waitFor({ timeout: 60_000 });
    assert.match(
      (await page.getByTestId("preview-about").textContent()) ?? "",
      /Trainer quickstart-json-answers on svc-tiny; tokens counted with svc-tiny's byte tokenizer \(1 token = 1 byte\); conversations may be up to 160 tokens\./,
    );

    const trainLines = readFileSync(path.join(dir, "data", "train.jsonl"), "utf8")
      .trim()
      .split("\n");
    assert.equal(await split("train").getByTestId("conversations").textContent(), String(trainLines.length));
    assert.equal(await split("eval").getByTestId("conversations").textContent(), "20");
    assert.equal(await split("train").getByTestId("problem-count").textContent(), "0");
    // Every conversation is in one bar of the histogram, and none is past the limit.
    const counts = await split("train")
      .locator("rect.bar")
      .evaluateAll((bars) => bars.map((b) => Number(b.getAttribute("data-count"))));
    assert.equal(
      counts.reduce((a, b) => a + b, 0),
      trainLines.length,
    );
    assert.equal(await split("train").locator("rect.bar.over").count(), 0);
    // A vertical line has an empty box, which Playwright calls hidden: attached is what can be checked.
    await split("train").getByTestId("length-limit").waitFor({ state: "attached" });
    assert.equal(
      await split("train")
        .getByTestId("length-note")
        .textContent()
        .then((t) => t?.trim()),
      "Every conversation fits in 160 tokens (context).",
    );

    // The histogram reads its bins from the keyboard (the readout stays for the screenshot).
    const histogram = split("train").getByTestId("length-histogram");
    await histogram.focus();
    await page.keyboard.press("End");
    assert.match((await histogram.getAttribute("aria-valuetext")) ?? "", /^\d+–160 tokens: 0 conversations$/);
    await page.keyboard.press("Home");
    // Right, bin by bin, to the first one with conversations: the leftmost bar drawn.
    const firstBar = Number(await split("train").locator("rect.bar").first().getAttribute("data-from"));
    const valueText = async () => (await histogram.getAttribute("aria-valuetext")) ?? "";
    for (let key = 0; key < 100 && !/tokens: [1-9]/.test(await valueText()); key++) await page.keyboard.press("ArrowRight");
    assert.match(await valueText(), new RegExp(`^${firstBar + 1}–\\d+ tokens: [1-9]\\d* conversations?$`));
    await screenshotBothThemes(page, "datasets");

    // The first conversations as the file has them, three and then all twenty.
    const rows = split("train").getByTestId("dataset-rows").locator("li");
    assert.equal(await rows.count(), 3);
    const first = JSON.parse(trainLines[0]) as { messages: { content: string }[] };
    assert.deepEqual(
      await rows.first().locator(".content").allTextContents(),
      first.messages.map((m) => m.content),
    );
    assert.match((await rows.first().locator(".where").textContent()) ?? "", /^line 1 · \d+ tokens$/);
    await split("train").getByRole("button", { name: "Show 17 more" }).press("Enter");
    assert.equal(await rows.count(), 20);

    assert.deepEqual(consoleWatch.errors, []);
  });

  it("a broken training set: problems by line, the conversation past the limit in the histogram, and Refresh after a fix", async () => {
    const good = chat("What is the opposite of hot?", '{"answer": "The opposite of hot is cold."}');
    const lines = [good, "{not json", good, chat("x".repeat(300), "y"), JSON.stringify({ messages: [{ role: "robot", content: "beep" }] }), good];
    const { studio, dir } = await project("broken", lines);
    await openRoute(page, studio.url, "#/datasets");
    await page
      .getByTestId("preview-verdict")
      .getByText("Not ready: svc start would refuse these datasets. Fix the problems below.")
      .waitFor({ timeout: 60_000 });
    assert.equal(await split("train").getByTestId("problem-count").textContent(), "3");
    const issues = await split("train").getByTestId("dataset-issues").locator("li").allTextContents();
    assert.equal(issues.length, 3);
    assert.match(issues[0], /^line 2\s+not valid JSON$/);
    assert.match(issues[1], /^line 4\s+conversation is 306 tokens, longer than the model's context of 160 tokens \(1 token = 1 byte\)$/);
    assert.match(issues[2], /^line 5\s+/);
    // The long conversation is counted in the chart, in a bar past the limit, and said in words.
    assert.equal(await split("train").locator("rect.bar.over").count(), 1);
    assert.equal((await split("train").getByTestId("length-note").textContent())?.trim(), "1 conversation is longer than 160 tokens: the run refuses it.");
    await page.evaluate(() => window.scrollTo(0, 0));
    await screenshotBothThemes(page, "datasets-problems");

    // Fixed on disk: Refresh reads the files again.
    writeFileSync(path.join(dir, "data", "train.jsonl"), [good, good, good].join("\n") + "\n");
    await page.getByTestId("refresh-datasets").click();
    await pollUntil(async () => ((await split("train").getByTestId("problem-count").textContent()) === "0" ? true : undefined), {
      timeoutMs: 60_000,
      description: "the fixed file read again",
    });
    assert.equal(await split("train").getByTestId("conversations").textContent(), "3");
    await page
      .getByTestId("preview-verdict")
      .getByText(/^Ready to train/)
      .waitFor();
  });

  it("says when there is no trainer, and when the project does not build", async () => {
    const empty = await stack.studioFor(writeProject(stack.tmp.path, "no-trainer", NO_TRAINER_SOURCE));
    await openRoute(page, empty.url, "#/datasets");
    await page.getByText("No trainer in src/svc/index.ts yet. Add createTrainer(...) and pass it to createSvc.").waitFor({ timeout: 60_000 });
    const broken = await stack.studioFor(writeProject(stack.tmp.path, "no-build", BROKEN_SOURCE));
    await openRoute(page, broken.url, "#/datasets");
    await page
      .getByTestId("preview-error")
      .getByText(/^Couldn't preview the datasets: .*index\.ts:2: /)
      .waitFor({ timeout: 60_000 });
  });
});
