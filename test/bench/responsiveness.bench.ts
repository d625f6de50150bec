/**
 * Responsiveness figures that used to be timing assertions inside tests (issue 10): each beside a baseline measured
 * in the same run, so a slower machine moves both.
 * - training abort: from `abort()` fired by a timer to the loop returning, vs. the mean time of one training step;
 * - loss statistics over 100,000 points, vs. sorting the same 100,000 numbers;
 * - chart decimation + path of 100,000 points, vs. copying them once.
 */
import os from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { initTf } from "../../engine/backend.js";
import { disposeWeights } from "../../engine/model/weights.js";
import { trainLora } from "../../engine/train/lora-trainer.js";
import { decimate, linePath, stepExtent, valueExtent } from "../../ui-shared/chart.js";
import { computeStats } from "../../ui-shared/stats.js";
import { toyQuackChats, trainToyModel } from "../fixtures/engine/tiny-model.js";
import { report } from "./stats.js";

/** Median wall time (ms) of `fn` over `rounds` runs. */
function median(fn: () => unknown, rounds = 15): number {
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    fn();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(rounds / 2)];
}

// --- training abort ----------------------------------------------------------------------------
await initTf();
const base = await trainToyModel(20);
const dir = mkdtempSync(path.join(os.tmpdir(), "svc-bench-abort-"));
try {
  const controller = new AbortController();
  const stepEnds: number[] = [];
  let abortedAt = 0;
  await trainLora({
    baseModel: base,
    train: toyQuackChats(),
    outputDir: dir,
    maxSteps: 100000,
    learningRate: 1e-2,
    batchSize: 2,
    seed: 1,
    signal: controller.signal,
    onLog: (log) => {
      stepEnds.push(performance.now());
      if (log.step === 5)
        setTimeout(() => {
          abortedAt = performance.now();
          controller.abort();
        }, 200);
    },
  });
  const stopDelay = performance.now() - abortedAt;
  const stepMs = (stepEnds[stepEnds.length - 1] - stepEnds[0]) / Math.max(1, stepEnds.length - 1);
  report("training abort → loop returned", stopDelay, "ms", "one training step", stepMs, false);
} finally {
  disposeWeights(base.weights);
  rmSync(dir, { recursive: true, force: true });
}

// --- statistics and chart over 100,000 points ----------------------------------------------------
const values = Array.from({ length: 100_000 }, (_, i) => Math.sin(i) + 2);
report(
  "loss statistics, 100,000 points",
  median(() => computeStats(values)),
  "ms",
  "sorting 100,000 numbers",
  median(() => [...values].sort((a, b) => a - b)),
  false,
);

const points = values.map((value, i) => ({ step: i + 1, value }));
const area = { left: 0, top: 0, width: 800, height: 300 };
const chartMs = median(() => linePath(decimate(points, stepExtent(points)!, area), stepExtent(points)!, valueExtent(points)!, area));
report(
  "chart decimation + path, 100,000 points",
  chartMs,
  "ms",
  "copying 100,000 points",
  median(() => points.map((p) => ({ ...p }))),
  false,
);
