/**
 * Adapter downloads in the browser studio (issue 12): the job page's "Adapter files" (the final adapter and each
 * checkpoint, GGUF and PEFT) and the endpoint page's "Adapter". Real browser, real studio, real cloud with one
 * training worker and a real 4-step run (a checkpoint every 2 steps), made on first use so each test also runs alone.
 * The saved files are compared with the artifacts on the cloud's disk; the Export row (issue 27) writes a merged GGUF
 * and an Ollama zip through the studio's `svc export`. Screenshots: studio-adapter-*.png, studio-export-row-*.png.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Download, Page } from "playwright-core";
import type { Deployment, Job } from "../../../sdk/wire.js";
import { fileURLToPath } from "node:url";
import { readGgufHeader } from "../../../engine/gguf/reader.js";
import { formatBytes } from "../../../ui-shared/format.js";
import { launchChromium, type ChromiumSession } from "../../support/chromium.js";
import { pollUntil } from "../../support/poll.js";
import { openRoute, screenshotBothThemes, watchConsole } from "./support/pages.js";
import { startStudioStack, studioRequest, trainThroughStudio, type StudioStack } from "../../support/studioStack.js";

describe("studio adapter downloads: job page and endpoint page (issue 12)", function () {
  this.timeout(240_000);
  let stack: StudioStack;
  let browser: ChromiumSession;
  let page: Page;
  let consoleWatch: ReturnType<typeof watchConsole>;
  let trained: Promise<Job> | undefined;

  before(async () => {
    [stack, browser] = await Promise.all([
      startStudioStack({ workers: 1, maxSteps: 4, saveSteps: 2 }),
      launchChromium({ viewport: { width: 1280, height: 1000 } }),
    ]);
    page = browser.page;
    consoleWatch = watchConsole(page);
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  const completedJob = () => (trained ??= trainThroughStudio(stack.studio));
  const onDisk = (job: Job, name: string) => readFileSync(path.join(stack.cloud.dataDir, "artifacts", job.id, name));

  async function saved(download: Download): Promise<Buffer> {
    const file = path.join(stack.tmp.path, download.suggestedFilename());
    await download.saveAs(file);
    return readFileSync(file);
  }

  it("the job page lists the final adapter and each checkpoint before it (the last step's once); GGUF and PEFT save the artifacts' bytes, by mouse and keyboard", async () => {
    const job = await completedJob();
    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    const files = page.getByTestId("adapter-files");
    const rows = files.getByTestId("adapter-download");
    await rows.first().waitFor();
    assert.deepEqual(await rows.locator(".label").allTextContents(), ["Final adapter (step 4)", "Checkpoint, step 2"]);

    const final = rows.filter({ hasText: "Final adapter" });
    const [gguf] = await Promise.all([page.waitForEvent("download"), final.getByTestId("download-gguf").click()]);
    assert.equal(gguf.suggestedFilename(), `quickstart-json-answers-${job.id.slice(0, 8)}-adapter.gguf`);
    assert.ok((await saved(gguf)).equals(onDisk(job, "adapter.gguf")), "the saved GGUF is the final adapter");

    // Keyboard only: Tab reaches the checkpoint's PEFT button, Enter downloads.
    const checkpoint = rows.filter({ hasText: "Checkpoint, step 2" });
    await checkpoint.getByTestId("download-gguf").focus();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute("data-testid")), "download-peft");
    const [peft] = await Promise.all([page.waitForEvent("download"), page.keyboard.press("Enter")]);
    assert.equal(peft.suggestedFilename(), `quickstart-json-answers-${job.id.slice(0, 8)}-step-2-peft.zip`);
    const zipFile = path.join(stack.tmp.path, "step-2.zip");
    writeFileSync(zipFile, await saved(peft));
    assert.deepEqual(execFileSync("unzip", ["-Z1", zipFile], { encoding: "utf8" }).trim().split("\n").sort(), [
      "adapter_config.json",
      "adapter_model.safetensors",
    ]);
    assert.ok(
      execFileSync("unzip", ["-p", zipFile, "adapter_model.safetensors"], { maxBuffer: 64 * 2 ** 20 }).equals(
        onDisk(job, "checkpoint-2.adapter_model.safetensors"),
      ),
    );

    await files.scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "adapter-job-files");
    assert.deepEqual(consoleWatch.errors, []);
  });

  it("the endpoint page downloads the adapter its target serves", async () => {
    const job = await completedJob();
    const created = await studioRequest(stack.studio, "POST", "/api/deployments", {
      body: { slug: "checkpoint-bot", target: { kind: "checkpoint", jobId: job.id, step: 2 } },
    });
    assert.equal(created.status, 201, created.text);
    const deployment = created.json as Deployment;
    await openRoute(page, stack.studio.url, `#/endpoints/${deployment.id}`);
    const section = page.getByTestId("endpoint-adapter");
    await section.getByText(`Checkpoint step 2 (job ${job.id.slice(0, 8)})`).waitFor();
    const [gguf] = await Promise.all([page.waitForEvent("download"), section.getByTestId("download-gguf").click()]);
    assert.equal(gguf.suggestedFilename(), `quickstart-json-answers-${job.id.slice(0, 8)}-step-2.gguf`);
    assert.ok((await saved(gguf)).equals(onDisk(job, "checkpoint-2.gguf")));
    await section.scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "adapter-endpoint");
  });

  it("exports a merged GGUF from the job page's Export row (issue 27): the size shown before, the weights chosen, the file saved", async () => {
    const job = await completedJob();
    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    const row = page.getByTestId("model-export");
    await row.getByTestId("export-adapter").selectOption("2");
    const size = row.getByTestId("export-size");
    // The size estimate appears once the base model's weight count is known, before anything is written.
    await row.getByText(/^about \d/).waitFor();
    const q8Size = await size.textContent();
    await row.getByTestId("export-quant").selectOption("f16");
    await pollUntil(async () => ((await size.textContent()) !== q8Size ? true : undefined), {
      timeoutMs: 5000,
      description: "the F16 size to replace Q8_0's",
    });
    const [merged] = await Promise.all([page.waitForEvent("download"), row.getByTestId("export-run").click()]);
    assert.equal(merged.suggestedFilename(), `quickstart-json-answers-${job.id.slice(0, 8)}-step-2-f16.gguf`);
    const file = path.join(stack.tmp.path, "merged-f16.gguf");
    writeFileSync(file, await saved(merged));
    const header = await readGgufHeader(file);
    assert.equal(header.metadata.get("general.file_type")?.value, 1, "F16");
    assert.equal(
      header.tensors.some((t) => t.name.includes("lora")),
      false,
      "the adapter is merged in, not beside",
    );
    await row
      .getByTestId("export-result")
      .getByText(`Downloaded quickstart-json-answers-${job.id.slice(0, 8)}-step-2-f16.gguf.`)
      .waitFor();
    assert.deepEqual(consoleWatch.errors, []);
  });

  it("exports for Ollama from the job page: its size shown first, progress while svc export runs, a zip of the Modelfile and both GGUFs, and the command to run", async () => {
    const job = await completedJob();
    const stem = `quickstart-json-answers-${job.id.slice(0, 8)}`;
    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    const row = page.getByTestId("model-export");
    await row.getByTestId("export-adapter").selectOption("2");
    await row.getByTestId("export-format").selectOption("ollama");
    // Ollama ships the base as it is plus the adapter: their sizes, shown before anything is written.
    const base = readFileSync(fileURLToPath(new URL("../../../models/svc-tiny.gguf", import.meta.url)));
    const expected = formatBytes(base.length + onDisk(job, "checkpoint-2.gguf").length);
    await row.getByTestId("export-size").getByText(expected, { exact: true }).waitFor();
    assert.equal(await row.getByTestId("export-quant").count(), 0, "Ollama keeps the base's weights: no weight choice");

    await row.scrollIntoViewIfNeeded();
    await screenshotBothThemes(page, "export-row");
    const downloading = page.waitForEvent("download");
    await row.getByTestId("export-run").click();
    await row.getByTestId("export-progress").waitFor();
    const zip = await downloading;
    assert.equal(zip.suggestedFilename(), `${stem}-step-2-ollama.zip`);
    const zipFile = path.join(stack.tmp.path, "ollama.zip");
    writeFileSync(zipFile, await saved(zip));
    assert.deepEqual(execFileSync("unzip", ["-Z1", zipFile], { encoding: "utf8" }).trim().split("\n").sort(), [
      "Modelfile",
      `${stem}-step-2-lora.gguf`,
      "svc-tiny.gguf",
    ]);
    const modelfile = execFileSync("unzip", ["-p", zipFile, "Modelfile"], { encoding: "utf8" });
    assert.match(modelfile, /^FROM \.\/svc-tiny\.gguf$/m);
    assert.match(modelfile, new RegExp(`^ADAPTER \\./${stem}-step-2-lora\\.gguf$`, "m"));
    await row.getByTestId("export-result").getByText(`Downloaded ${stem}-step-2-ollama.zip. Unzip it, then in its folder run:`).waitFor();
    assert.equal(await row.getByTestId("export-command").textContent(), `ollama create ${stem.toLowerCase()} -f Modelfile`, "the command to run, not run");
    await screenshotBothThemes(page, "export-row-done");
  });

  it("says why a download failed, in the row that asked", async () => {
    const job = await completedJob();
    await openRoute(page, stack.studio.url, `#/jobs/${job.id}`);
    const row = page.getByTestId("adapter-download").filter({ hasText: "Checkpoint, step 2" });
    await row.waitFor();
    // The artifact leaves the cloud's disk behind the page's back: the studio relays the cloud's 500.
    const file = path.join(stack.cloud.dataDir, "artifacts", job.id, "checkpoint-2.gguf");
    const kept = readFileSync(file);
    execFileSync("rm", [file]);
    try {
      await row.getByTestId("download-gguf").click();
      await row
        .getByRole("alert")
        .getByText(/^Couldn't download: an artifact file is missing from the cloud's data dir/)
        .waitFor();
    } finally {
      writeFileSync(file, kept);
    }
  });
});
