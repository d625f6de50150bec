#!/usr/bin/env node
// Runs every benchmark in test/bench/*.bench.ts (or those named on the command line), one process
// each, so one benchmark's warm caches do not flatter the next. Each prints its own ratios.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const wanted = process.argv.slice(2);
const files = readdirSync(path.join(root, "test/bench"))
  .filter((f) => f.endsWith(".bench.ts"))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)));
let failed = 0;
for (const file of files) {
  console.log(`\n=== ${file}`);
  const result = spawnSync(process.execPath, ["--import", "tsx", path.join(root, "test/bench", file)], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) failed += 1;
}
process.exit(failed ? 1 : 0);
