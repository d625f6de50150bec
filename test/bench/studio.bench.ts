/**
 * Studio benchmarks (issue 5), each beside a baseline measured in the same run:
 * - `GET /api/jobs` with 10,000 jobs (time and bytes) vs the cloud's own `GET /v1/jobs` (goal:
 *   ≤ 1.2×, issue 15), and that vs a bare Fastify route streaming the same bytes from a file;
 * - SSE relay throughput (`/api/jobs/:id/events`) vs reading the cloud's stream directly;
 * - chart render time for 100,000 points in Chromium vs rendering an empty job page.
 */
import { createReadStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import Fastify from "fastify";
import { launchChromium } from "../support/chromium.js";
import { pollUntil } from "../support/poll.js";
import { signInWithNewProject } from "../support/api.js";
import { percentile, report } from "./stats.js";
import { appendTrainingRun } from "./workerRun.js";
import { startCloudProcess, startStudioProcess } from "./benchProcesses.js";

const JOBS = 10_000;
const RELAY_EVENTS = 20_000;
const CHART_POINTS = 100_000;

const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-studio-"));
const cloud = await startCloudProcess(path.join(dir, "cloud"));
process.env.SVC_HOME = path.join(dir, "home");
process.env.SVC_CLOUD_URL = cloud.cloudUrl;

try {
  const projectDir = path.join(dir, "project");
  const { token, projectId, client } = await signInWithNewProject(cloud.cloudUrl, projectDir, "bench");
  const studio = await startStudioProcess(projectDir, { SVC_HOME: process.env.SVC_HOME, SVC_CLOUD_URL: cloud.cloudUrl });
  const studioHeaders = { "x-svc-studio-token": studio.token };

  // Jobs that stream events first (they are assigned to the bench worker in creation order).
  const relayJob = await client.createJob({ name: "relay", config: { maxSteps: 1 } });
  await appendTrainingRun(cloud, relayJob.id, RELAY_EVENTS);
  const chartJob = await client.createJob({ name: "chart", config: { maxSteps: 1 } });
  await appendTrainingRun(cloud, chartJob.id, CHART_POINTS);
  const emptyJob = await client.createJob({ name: "empty", config: { maxSteps: 1 } });

  // --- /api/jobs with 10,000 jobs ------------------------------------------------------------
  for (let i = 0; i < JOBS - 3; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, JOBS - 3 - i) }, (_, k) => client.createJob({ name: `job ${i + k}`, config: { model: "svc-tiny", maxSteps: 1 } })),
    );
  }
  let studioBytes = 0;
  let cloudBytes = 0;
  const listUrl = `${cloud.cloudUrl}/v1/jobs?projectId=${projectId}`;
  const jobsFile = path.join(dir, "jobs.json");
  writeFileSync(jobsFile, Buffer.from(await (await fetch(listUrl, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer()));
  const staticServer = Fastify();
  staticServer.get("/", (_request, reply) => reply.type("application/json; charset=utf-8").send(createReadStream(jobsFile)));
  await staticServer.listen({ port: 0, host: "127.0.0.1" });
  const staticUrl = `http://127.0.0.1:${(staticServer.server.address() as { port: number }).port}/`;
  const viaStudio: number[] = [];
  const direct: number[] = [];
  const fromFile: number[] = [];
  // Interleaved request by request, so a burst of load from elsewhere (this machine is shared)
  // hits all three alike, and in every order in turn, so that each follows each other equally
  // often: what one leaves behind (the file's read buffers to collect, the studio's request
  // warming the cloud's) lands on all alike. 300 of each: a p50 of 120 swung by 30% between runs.
  const getStudio = async () => (studioBytes = (await (await fetch(`${studio.url}/api/jobs`, { headers: studioHeaders })).arrayBuffer()).byteLength);
  const getCloud = async () => (cloudBytes = (await (await fetch(listUrl, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer()).byteLength);
  const getFile = () => fetch(staticUrl).then((r) => r.arrayBuffer());
  const sides = [
    [getStudio, viaStudio],
    [getCloud, direct],
    [getFile, fromFile],
  ] as const;
  const orders = [
    [0, 1, 2],
    [0, 2, 1],
    [1, 0, 2],
    [1, 2, 0],
    [2, 0, 1],
    [2, 1, 0],
  ];
  for (let i = 0; i < 303; i++) {
    for (const [get, samples] of orders[i % orders.length].map((k) => sides[k])) {
      const t = performance.now();
      await get();
      if (i >= 3) samples.push(performance.now() - t);
    }
  }
  await staticServer.close();
  const p50 = (samples: number[]) =>
    percentile(
      samples.sort((a, b) => a - b),
      50,
    );
  report(`GET /api/jobs, ${JOBS} jobs, p50`, p50(viaStudio), "ms", "cloud /v1/jobs p50", p50(direct), false);
  report(`GET /v1/jobs, ${JOBS} jobs, p50`, p50(direct), "ms", "static file p50", p50(fromFile), false);
  report(`GET /api/jobs, ${JOBS} jobs, bytes`, studioBytes, "bytes", "cloud /v1/jobs", cloudBytes, false);

  // --- SSE relay throughput --------------------------------------------------------------------
  const readAll = async (url: string, headers: Record<string, string>) => {
    const t = performance.now();
    const text = await (await fetch(url, { headers })).text();
    return { seconds: (performance.now() - t) / 1000, bytes: Buffer.byteLength(text) };
  };
  const relayRuns: number[] = [];
  const directRuns: number[] = [];
  for (let i = 0; i < 3; i++) {
    const relayed = await readAll(`${studio.url}/api/jobs/${relayJob.id}/events`, studioHeaders);
    const straight = await readAll(`${cloud.cloudUrl}/v1/jobs/${relayJob.id}/events`, { authorization: `Bearer ${token}` });
    relayRuns.push((RELAY_EVENTS + 3) / relayed.seconds);
    directRuns.push((RELAY_EVENTS + 3) / straight.seconds);
  }
  report(`SSE relay, ${RELAY_EVENTS} events (best of 3)`, Math.max(...relayRuns), "ev/s", "cloud SSE direct", Math.max(...directRuns));

  // --- chart render in Chromium ----------------------------------------------------------------
  const browser = await launchChromium();
  try {
    const page = browser.page;
    const renderMs = async (jobId: string, done: () => Promise<boolean>) => {
      await page.goto("about:blank");
      const t = performance.now();
      await page.goto(`${studio.url}/#/jobs/${jobId}`);
      await pollUntil(async () => ((await done()) ? true : undefined), { timeoutMs: 120_000, intervalMs: 20, description: `job ${jobId} rendered` });
      return performance.now() - t;
    };
    const emptyRendered = async () => (await page.getByText("Waiting for training.log events…").count()) > 0;
    const chartRendered = async () =>
      (await page.locator(".readout").count()) > 0 &&
      (await page.getByText(`step=${CHART_POINTS} loss=`, { exact: false }).count()) > 0 &&
      (await page.locator('path[data-series="loss"]').count()) > 0;
    const empty = await renderMs(emptyJob.id, emptyRendered);
    const full = await renderMs(chartJob.id, chartRendered);
    // Interaction cost once loaded: one hover readout over the 100,000-point chart.
    const box = (await page.locator("svg.plot").boundingBox())!;
    const hoverStart = performance.now();
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.locator(".readout", { hasText: "Step" }).waitFor();
    const hover = performance.now() - hoverStart;
    report(`job page, chart of ${CHART_POINTS} points (load+render)`, full, "ms", "empty job page", empty, false);
    report(`hover readout on ${CHART_POINTS} points`, hover, "ms", "empty job page", empty, false);
  } finally {
    await browser.close();
  }
  await studio.close();
} finally {
  await cloud.close();
  rmSync(dir, { recursive: true, force: true });
}
