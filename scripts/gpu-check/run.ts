/**
 * `npm run gpu-check [-- --shapes qwen3-1.7b]`: finds the Python the torch backend would use and
 * runs gpu_check.py there (its options pass through). Without a CUDA GPU it says so and exits 2.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { detectTorch, SETUP_HINT } from "../../engine/backends/torch/detect.js";

const found = await detectTorch();
if (!found.ok) {
  console.error(`gpu-check: no Python with the torch backend's packages (${found.reason}); ${SETUP_HINT}`);
  process.exit(2);
}
if (found.device !== "cuda") {
  console.error(`gpu-check: ${found.python} (torch ${found.torchVersion}) sees no CUDA GPU here (device: ${found.device}).`);
  process.exit(2);
}
const script = path.join(path.dirname(fileURLToPath(import.meta.url)), "gpu_check.py");
const run = spawnSync(found.python, [script, ...process.argv.slice(2)], { stdio: "inherit", env: { ...process.env, PYTHONUNBUFFERED: "1" } });
process.exit(run.status ?? 1);
