#!/usr/bin/env node
// `npm run lint` (and the test line's first step): Biome over TypeScript and Svelte, ruff over Python,
// lint rules and formatting both. `--fix` writes Biome's and ruff's fixes instead of failing on them.
// ruff comes from requirements-dev.txt: $RUFF, else the dev venv scripts/setup-system.sh makes, else PATH.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const fix = process.argv.includes("--fix");

function ruffPath() {
  if (process.env.RUFF) return process.env.RUFF;
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  const venv = process.env.SVC_DEV_VENV || path.join(cache, "svc", "dev-venv");
  const inVenv = process.platform === "win32" ? path.join(venv, "Scripts", "ruff.exe") : path.join(venv, "bin", "ruff");
  return existsSync(inVenv) ? inVenv : "ruff";
}

const biome = path.join(root, "node_modules", "@biomejs", "biome", "bin", "biome");
const ruff = ruffPath();
const steps = fix
  ? [
      [process.execPath, [biome, "check", "--write", "."]],
      [ruff, ["check", "--fix", "."]],
      [ruff, ["format", "."]],
    ]
  : [
      [process.execPath, [biome, "check", "."]],
      [ruff, ["check", "."]],
      [ruff, ["format", "--check", "."]],
    ];

let failed = 0;
for (const [command, args] of steps) {
  const run = spawnSync(command, args, { cwd: root, stdio: "inherit" });
  if (run.error) console.error(`lint: cannot run ${command} (${run.error.message}); run scripts/setup-system.sh or set RUFF`);
  if (run.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
