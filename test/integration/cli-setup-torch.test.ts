/**
 * `svc setup torch` (built CLI): on a machine set up by scripts/setup-system.sh it finds the venv
 * current and reports the versions and device it trains with; a Python that cannot make a venv is
 * named, with nothing left half-made.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { torchVenvDir } from "../../engine/backends/torch/venv.js";
import { requireTorchStack } from "../support/torchStack.js";
import { cliPath } from "../support/cloud.js";

function svc(args: string[]) {
  return spawnSync(process.execPath, [cliPath, ...args], { encoding: "utf8", timeout: 240_000 });
}

describe("svc setup torch", function () {
  this.timeout(300_000);

  it("reports the installed stack without reinstalling it", async function () {
    await requireTorchStack(this);
    const run = svc(["setup", "torch"]);
    assert.equal(run.status, 0, run.stderr + run.stdout);
    assert.match(run.stdout, /^already set up: torch \d+\.\d+\.\d+\S* \((cpu|cuda|mps)\), transformers \d+\.\d+\.\d+, peft \d+\.\d+\.\d+$/m);
    assert.match(run.stdout, new RegExp(`venv: ${torchVenvDir().replace(/[/.]/g, "\\$&")}`));
  });

  it("names a Python that cannot create the venv, and leaves no venv behind", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "svc-setup-torch-"));
    try {
      const venv = path.join(dir, "venv");
      const run = svc(["setup", "torch", "--venv", venv, "--python", path.join(dir, "no-python3")]);
      assert.equal(run.status, 1);
      assert.match(run.stderr, /svc: cannot run .*no-python3: .*ENOENT/);
      assert.equal(existsSync(venv), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("answers a usage error for anything but torch", () => {
    const run = svc(["setup", "tensorflow"]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /usage: svc setup torch/);
  });
});
