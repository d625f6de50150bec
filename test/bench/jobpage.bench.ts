/**
 * Job page with a big history (issue 15 item 5): the studio's `#/jobs/:id` in headless Chromium
 * for a finished job with 100,000 training.log points, against an empty job measured in the same
 * run. Prints load+render time (median of 3), the main thread's long tasks during that load, and
 * the event stream's time to first byte and to its end through the studio. Also leaves a
 * light-theme screenshot of the big page (test-results/screenshots/jobpage-100k.png).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startCloud } from "../../cloud/serve.js";
import { CloudClient } from "../../sdk/client.js";
import { createStudioServer } from "../../studio/index.js";
import { launchChromium, screenshot } from "../support/chromium.js";
import { percentile, report } from "./stats.js";
import { appendTrainingRun } from "./workerRun.js";

const POINTS = 100_000;
const RUNS = 3;

const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-jobpage-"));
const cloud = await startCloud({ dataDir: path.join(dir, "cloud"), port: 0, edgePort: 0 });
process.env.SVC_HOME = path.join(dir, "home");
process.env.SVC_CLOUD_URL = cloud.cloudUrl;

const median = (values: number[]) => percentile([...values].sort((a, b) => a - b), 50);

try {
  const { token } = await CloudClient.createAnonymousToken(cloud.cloudUrl);
  const project = await new CloudClient({ baseUrl: cloud.cloudUrl, token }).createProject({ name: "bench" });
  const client = new CloudClient({ baseUrl: cloud.cloudUrl, token, projectId: project.id });
  mkdirSync(process.env.SVC_HOME, { recursive: true });
  writeFileSync(path.join(process.env.SVC_HOME, "credentials.json"), JSON.stringify({ kind: "anonymous", cloudUrl: cloud.cloudUrl, token }));
  const projectDir = path.join(dir, "project");
  mkdirSync(path.join(projectDir, ".svc"), { recursive: true });
  writeFileSync(path.join(projectDir, ".svc", "state.json"), JSON.stringify({ orgSlug: project.orgSlug, projectSlug: project.slug, projectId: project.id }));
  const studio = await createStudioServer({ projectDir, host: "127.0.0.1", port: 0 });

  // Jobs are assigned to the bench worker in creation order: the big one gets its events first.
  const bigJob = await client.createJob({ name: "big history", config: { model: "svc-tiny" } });
  await appendTrainingRun(cloud, bigJob.id, POINTS);
  const emptyJob = await client.createJob({ name: "empty", config: { model: "svc-tiny" } });

  // --- the event stream through the studio, as the page asks for it ---------------------------
  const streamTimes = async (jobId: string) => {
    const t = performance.now();
    const response = await fetch(`${studio.url}/api/jobs/${jobId}/events?studioToken=${studio.token}&batch=1`);
    const reader = response.body!.getReader();
    let first = NaN;
    let bytes = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (Number.isNaN(first)) first = performance.now() - t;
      bytes += value.byteLength;
    }
    return { first, all: performance.now() - t, bytes };
  };
  const streams = [];
  for (let i = 0; i < RUNS; i++) streams.push(await streamTimes(bigJob.id));
  report(`event stream, ${POINTS} points, first byte`, median(streams.map((s) => s.first)), "ms", "-", median(streams.map((s) => s.first)), false);
  report(`event stream, ${POINTS} points, whole`, median(streams.map((s) => s.all)), "ms", "first byte", median(streams.map((s) => s.first)), false);
  console.log(`event stream bytes: ${streams[0].bytes}`);

  // --- the page in Chromium --------------------------------------------------------------------
  const browser = await launchChromium();
  try {
    const page = browser.page;
    await page.emulateMedia({ colorScheme: "light" });
    // Long tasks (> 50 ms on the main thread) are what makes a page feel frozen while it loads.
    await page.addInitScript(() => {
      const w = window as unknown as { __longTaskMs: number };
      w.__longTaskMs = 0;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries()) w.__longTaskMs += entry.duration;
      }).observe({ type: "longtask", buffered: true });
    });
    // Rendered = the page's final state: the chart's placeholder (empty), or the loss path, the
    // last step's log line and the artifact count (big). Checked in the page on every frame with
    // textContent, which (unlike innerText) forces no layout, so the check does not slow the page.
    const isRendered = (points: number) => {
      if (points === 0) return document.querySelector(".job-detail")?.textContent?.includes("Waiting for training.log events…") ?? false;
      const log = document.querySelector(".log")?.textContent ?? "";
      return document.querySelector('path[data-series="loss"]') !== null && log.includes(`step=${points} loss=`) && log.includes("0 artifacts") && document.querySelector('[data-testid="artifact-count"]')?.textContent === "0";
    };
    const load = async (jobId: string, points: number) => {
      await page.goto("about:blank");
      const t = performance.now();
      await page.goto(`${studio.url}/#/jobs/${jobId}`);
      await page.waitForFunction(isRendered, points, { timeout: 120_000, polling: "raf" });
      const ms = performance.now() - t;
      const longTaskMs = await page.evaluate(() => (window as unknown as { __longTaskMs: number }).__longTaskMs);
      return { ms, longTaskMs };
    };
    const empty = [];
    const big = [];
    for (let i = 0; i < RUNS; i++) {
      empty.push(await load(emptyJob.id, 0));
      big.push(await load(bigJob.id, POINTS));
    }
    const bigMs = median(big.map((r) => r.ms));
    const emptyMs = median(empty.map((r) => r.ms));
    report(`job page, ${POINTS} points (load+render)`, bigMs, "ms", "empty job page", emptyMs, false);
    report(`job page, ${POINTS} points, long tasks`, median(big.map((r) => r.longTaskMs)), "ms", "empty job page", median(empty.map((r) => r.longTaskMs)), false);
    console.log(`runs (ms): big ${big.map((r) => r.ms.toFixed(0)).join(", ")}; empty ${empty.map((r) => r.ms.toFixed(0)).join(", ")}`);
    console.log(`goal: ${POINTS} points under 1000 ms: ${bigMs < 1000 ? "met" : "NOT met"}`);
    console.log(`screenshot: ${await screenshot(page, "jobpage-100k")}`);
  } finally {
    await browser.close();
  }
  await studio.close();
} finally {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
}
