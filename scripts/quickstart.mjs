#!/usr/bin/env node
// The main job on the embedded default: starts the local cloud (if it is not running), trains the
// quickstart project for real while streaming its log, then serves the studio for that project so
// the run, its loss chart and its endpoints can be explored in a browser. Ctrl-C stops the studio;
// `npx svc cloud stop` stops the cloud.
import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const cli = path.join(root, "dist", "cli.mjs");
const project = path.join(root, "examples", "quickstart");

function svc(args, options = {}) {
  const result = spawnSync(process.execPath, [cli, ...args], { cwd: project, stdio: "inherit", ...options });
  return result.status ?? 1;
}

if (!existsSync(cli)) {
  console.log("building svc (dist/ is missing) ...");
  if (spawnSync(process.execPath, [path.join(root, "scripts", "build.mjs")], { stdio: "inherit" }).status !== 0) process.exit(1);
}

console.log("\n== 1/3 the local cloud");
if (svc(["cloud", "start"]) !== 0) process.exit(1);

console.log("\n== 2/3 training examples/quickstart (svc start)");
const trained = svc(["start"]);
if (trained !== 0) {
  console.error(`\nsvc start exited with ${trained}; the studio still opens so you can look at the job.`);
}

console.log("\n== 3/3 the studio (svc dev) — Ctrl-C to stop");
const dev = spawn(process.execPath, [cli, "dev", ...process.argv.slice(2)], { cwd: project, stdio: "inherit" });
const stop = () => dev.kill("SIGINT");
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
dev.on("exit", (code) => process.exit(code ?? 0));
