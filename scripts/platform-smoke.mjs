#!/usr/bin/env node
// The smoke flow the hosted runners (ubuntu, windows, macos-14) run after the unit suite: `svc init` in a fresh
// folder, `svc start` on svc-tiny with a few steps against a cloud on free ports in a throwaway SVC_HOME, one edge
// request to an endpoint of the trained adapter, then `svc cloud stop`. Every svc process runs as `node cli.mjs`,
// as on a user's machine; it exits non-zero on the first step that fails.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const cli = path.join(root, "dist", "cli.mjs");
const home = mkdtempSync(path.join(os.tmpdir(), "svc-smoke-home-"));
const project = mkdtempSync(path.join(os.tmpdir(), "svc smoke project-")); // a space, as in "C:\Users\Ada Lovelace"
// tfjs unless told otherwise: it needs nothing but Node, so the flow means the same on every runner.
const env = { ...process.env, SVC_HOME: home, SVC_CLOUD_URL: "", SVC_TRAIN_BACKEND: process.env.SVC_TRAIN_BACKEND ?? "tfjs" };

function svc(args) {
  console.log(`\n== svc ${args.join(" ")}`);
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: project, env, stdio: "inherit", windowsHide: true, timeout: 10 * 60_000 });
  if (result.status !== 0) throw new Error(`svc ${args.join(" ")} exited with ${result.status ?? result.signal ?? result.error?.message}`);
}

let started = false;
try {
  svc(["init"]);
  const entry = path.join(project, "src", "svc", "index.ts");
  writeFileSync(entry, readFileSync(entry, "utf8").replace(/maxSteps:\s*\d+/, "maxSteps: 4"));
  svc(["cloud", "start", "--port", "0", "--edge-port", "0"]);
  started = true;
  svc(["start"]);

  const daemon = JSON.parse(readFileSync(path.join(home, "cloud", "daemon.json"), "utf8"));
  env.SVC_CLOUD_URL = daemon.cloudUrl;
  process.env.SVC_HOME = home;
  const { ProjectSession } = await import(pathToFileURL(path.join(root, "dist", "sdk.mjs")).href);
  const client = await (await ProjectSession.open({ projectDir: project, cloudUrl: daemon.cloudUrl })).scopedClient();
  const [job] = await client.listJobs();
  if (job?.status !== "completed") throw new Error(`the job is ${job?.status ?? "missing"}`);
  const deployment = await client.createDeployment({ slug: "smoke", target: { kind: "adapter", jobId: job.id } });
  const { key } = await client.createDeploymentKey(deployment.id, { label: "smoke" });
  const res = await fetch(`${daemon.edgeUrl}/d/smoke/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "smoke", messages: [{ role: "user", content: "Hi" }], max_tokens: 8 }),
  });
  const body = await res.text();
  console.log(`\n== edge: HTTP ${res.status} ${body.slice(0, 300)}`);
  if (res.status !== 200 || !JSON.parse(body).choices?.[0]?.message) throw new Error("the edge did not answer with a completion");
  console.log("\nsmoke flow passed");
} catch (err) {
  console.error(`\nsmoke flow failed: ${err.message}`);
  process.exitCode = 1;
} finally {
  if (started) {
    try {
      svc(["cloud", "stop"]);
    } catch (err) {
      console.error(err.message);
      process.exitCode = 1;
    }
  }
  rmSync(project, { recursive: true, force: true });
  rmSync(home, { recursive: true, force: true, maxRetries: 5 });
}
