/**
 * Tests that need the torch backend's Python (torch, transformers, peft) skip where it is missing
 * on a developer's machine, saying so, and fail in CI (CI=true), where scripts/setup-system.sh
 * must have made svc's venv: a missing install step never hides behind a skipped test.
 */
import { detectTorch } from "../../engine/backends/torch/detect.js";
import { startTorchBackend, type TorchBackend, type TorchBackendOptions } from "../../engine/backends/torch/index.js";
import { torchVenvPython } from "../../engine/backends/torch/venv.js";

let detection: ReturnType<typeof detectTorch> | undefined;

/** True when svc finds a Python with the whole stack (detected once per process). */
export async function torchStackAvailable(): Promise<boolean> {
  detection ??= detectTorch();
  return (await detection).ok;
}

/** Skips the calling test or hook when the stack is missing, or throws in CI. */
export async function requireTorchStack(context: Mocha.Context): Promise<void> {
  detection ??= detectTorch();
  const found = await detection;
  if (found.ok) return;
  if (process.env.CI === "true") throw new Error(`CI must have the torch backend's Python (scripts/setup-system.sh makes it): ${found.reason}`);
  console.log(`      skipped: ${found.reason}`);
  context.skip();
}

/** The Python the torch backend tests run: SVC_PYTHON when set, else svc's venv (scripts/setup-system.sh makes it). */
export function torchTestPython(): string {
  return process.env.SVC_PYTHON || torchVenvPython();
}

/** A torch backend for comparisons with exact references: float32, one thread (results independent of the machine). */
export function startExactTorchBackend(
  options: Pick<TorchBackendOptions, "quantizedBase" | "logitsChunkBytes" | "checkpointActivations"> = {},
): Promise<TorchBackend> {
  return startTorchBackend({ python: torchTestPython(), threads: 1, dtype: "float32", ...options });
}

/**
 * One exact torch backend shared by a suite's tests that each load their own base first (a load
 * replaces the previous base, adapter and trainer, as a worker's next job does): starting Python
 * and importing torch and transformers costs seconds per process. Call it in a describe body; the
 * backend starts on first use and stops after the suite.
 */
export function sharedExactTorchBackend(): () => Promise<TorchBackend> {
  let started: Promise<TorchBackend> | undefined;
  after(async () => {
    const backend = await started?.catch(() => undefined);
    await backend?.dispose();
  });
  return () => {
    started ??= startExactTorchBackend();
    return started;
  };
}
