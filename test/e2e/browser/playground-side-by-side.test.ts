/**
 * The Playground side by side (issue 12): the same prompt to two targets at once, both streaming, each reply with
 * its time to first token and tokens/s. Real browser, real studio, real cloud with one training worker and llama.cpp
 * serving svc-tiny and the adapters of a real 30-step run (a checkpoint every 10 steps), made on first use so each test
 * also runs alone. At temperature 0 each side must show exactly what its own target says when asked directly.
 * Screenshots: studio-playground-*.png.
 */
import assert from "node:assert/strict";
import type { Locator, Page } from "playwright-core";
import type { DeploymentTarget, Job } from "../../../sdk/wire.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { startStudioStack, studioRequest, trainThroughStudio, type StudioStack } from "../../support/studioStack.js";

const PROMPT = "What is the opposite of loud?";
const MAX_TOKENS = 16;
const STATS = /^first token \d+(\.\d+)? m?s · \d+(\.\d)? tokens\/s · (\d+) tokens$/;

describe("studio Playground side by side (issue 12)", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;
  let trained: Promise<Job> | undefined;

  before(async () => {
    [stack, browser] = await Promise.all([
      startStudioStack({ workers: 1, maxSteps: 30, saveSteps: 10 }),
      launchChromium({ viewport: { width: 1360, height: 1000 } }),
    ]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const completedJob = () => (trained ??= trainThroughStudio(stack.studio));

  /** What a target answers at temperature 0, asked through the studio for one JSON completion. */
  async function directAnswer(target: DeploymentTarget): Promise<{ text: string; tokens: number }> {
    const response = await studioRequest(stack.studio, "POST", "/api/inference/chat", {
      body: { target, messages: [{ role: "user", content: PROMPT }], temperature: 0, maxTokens: MAX_TOKENS, stream: false },
    });
    assert.equal(response.status, 200, response.text);
    return { text: response.json.choices[0].message.content, tokens: response.json.usage.completion_tokens };
  }

  const side = (name: "A" | "B") => page.getByTestId(`playground-side-${name}`);

  /**
   * Sends the prompt to both sides from the keyboard and waits until both replies ended; returns the order in which
   * the two chat requests left and finished.
   */
  async function sendToBoth(): Promise<string[]> {
    const order: string[] = [];
    const isChat = (request: { url(): string }) => request.url().endsWith("/api/inference/chat");
    const onSent = (request: { url(): string }) => isChat(request) && order.push("sent");
    const onFinished = (request: { url(): string }) => isChat(request) && order.push("finished");
    page.on("request", onSent);
    page.on("requestfinished", onFinished);
    try {
      await page.getByLabel("Temperature").fill("0");
      await page.getByLabel("Max tokens").fill(String(MAX_TOKENS));
      await page.getByLabel("Message", { exact: true }).fill(PROMPT);
      await page.getByLabel("Message", { exact: true }).press("Enter");
      await page.locator("vscode-button", { hasText: "Send to both" }).waitFor({ timeout: 90_000 });
      await pollUntil(async () => (order.filter((o) => o === "finished").length === 2 ? true : undefined), {
        timeoutMs: 10_000,
        description: "both chat requests to finish",
      });
    } finally {
      page.off("request", onSent);
      page.off("requestfinished", onFinished);
    }
    return order;
  }

  async function replyOf(column: Locator): Promise<{ text: string; stats: string }> {
    const replies = column.locator(".message-assistant .content");
    assert.equal(await replies.count(), 1, "one reply on this side");
    return {
      text: (await replies.textContent()) ?? "",
      stats: ((await column.getByTestId("reply-stats").textContent()) ?? "").replace(/^Side [AB], last reply:\s*/, ""),
    };
  }

  it("a job's base model beside its adapter (from the job page): both answer at once, each as its own target does, with first-token time and tokens/s", async () => {
    const job = await completedJob();
    const [base, adapter] = await Promise.all([directAnswer({ kind: "base_model", name: "svc-tiny" }), directAnswer({ kind: "adapter", jobId: job.id })]);
    assert.notEqual(base.text, adapter.text, "training changed what svc-tiny says");

    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    await page.getByTestId("compare-in-playground").click();
    await page.waitForURL(/compare=base$/);
    await side("A").getByText("Base model: svc-tiny").waitFor();
    await side("B")
      .getByText(`Final adapter (job ${job.id.slice(0, 8)})`)
      .waitFor();

    const order = await sendToBoth();
    assert.deepEqual(order, ["sent", "sent", "finished", "finished"], "both requests left before either answer ended: the sides stream at the same time");
    const [a, b] = [await replyOf(side("A")), await replyOf(side("B"))];
    assert.equal(a.text, base.text, "side A shows the base model's answer");
    assert.equal(b.text, adapter.text, "side B shows the adapter's answer");
    assert.equal(Number(STATS.exec(a.stats)?.[3]), base.tokens, a.stats);
    assert.equal(Number(STATS.exec(b.stats)?.[3]), adapter.tokens, b.stats);
    await screenshotBothThemes(page, "playground-side-by-side");
    assert.deepEqual(consoleWatch.errors, []);
  });

  it("two checkpoints of one job, chosen from the keyboard after switching layouts", async () => {
    const job = await completedJob();
    const [early, late] = await Promise.all([
      directAnswer({ kind: "checkpoint", jobId: job.id, step: 10 }),
      directAnswer({ kind: "checkpoint", jobId: job.id, step: 30 }),
    ]);
    await openRoute(page, stack.studio.url, "#/playground");
    await page.getByRole("heading", { name: "Playground" }).waitFor();
    // The layout switch is a pair of toggle buttons, reached and pressed with the keyboard.
    await page.getByRole("button", { name: "Chat", exact: true }).focus();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent?.trim()), "Side by side");
    await page.keyboard.press("Enter");
    await side("B").waitFor();
    assert.equal(await page.getByRole("button", { name: "Side by side" }).getAttribute("aria-pressed"), "true");

    assert.notEqual(early.text, late.text, "the checkpoints answer differently");
    for (const [name, step] of [
      ["A", "10"],
      ["B", "30"],
    ] as const) {
      await side(name).getByRole("radio", { name: "Checkpoint" }).check();
      await side(name).getByLabel("Job", { exact: true }).selectOption(job.id);
      const steps = side(name).getByLabel("Checkpoint step");
      await pollUntil(async () => ((await steps.locator("option").count()) >= 2 ? true : undefined), {
        timeoutMs: 10_000,
        description: "the job's checkpoint steps",
      });
      await steps.selectOption(step);
    }
    await side("A")
      .getByText(`Checkpoint step 10 (job ${job.id.slice(0, 8)})`)
      .waitFor();
    await side("B")
      .getByText(`Checkpoint step 30 (job ${job.id.slice(0, 8)})`)
      .waitFor();
    await sendToBoth();
    assert.equal((await replyOf(side("A"))).text, early.text);
    assert.equal((await replyOf(side("B"))).text, late.text);
    assert.match((await replyOf(side("A"))).stats, STATS);
    await screenshotBothThemes(page, "playground-two-checkpoints");

    // Back to one chat: side A keeps its target and its conversation.
    await page.getByRole("button", { name: "Chat", exact: true }).click();
    await page.getByText(`Checkpoint step 10 (job ${job.id.slice(0, 8)})`).waitFor();
    assert.equal(await page.locator(".message-assistant .content").textContent(), early.text);
    assert.match((await page.getByTestId("reply-stats").textContent()) ?? "", /first token .* tokens\/s/);
  });
});
