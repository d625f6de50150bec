import assert from "node:assert/strict";
import { loadProgressReporter } from "../../../cloud/workers/loadProgress.js";

/** The lines a reporter writes for a load of `totalBytes` reported in `parts` equal steps. */
function linesFor(totalBytes: number, parts: number): string[] {
  const lines: string[] = [];
  const progress = loadProgressReporter((line) => lines.push(line));
  for (let i = 0; i <= parts; i++) progress({ loadedBytes: (totalBytes * i) / parts, totalBytes, tensor: `blk.${i}.attn_q.weight` });
  return lines;
}

describe("the worker's base-model load progress lines", () => {
  it("a large base: one line per 10%, in GB", () => {
    const lines = linesFor(2.4e9, 100);
    assert.equal(lines.length, 11);
    assert.equal(lines[4], "loading the base model: 40% (0.96 GB of 2.4 GB)");
    assert.equal(lines.at(-1), "loading the base model: 100% (2.4 GB of 2.4 GB)");
  });

  it("a base under 1 GB counts in MB", () => {
    assert.equal(linesFor(270e6, 10)[5], "loading the base model: 50% (135.0 MB of 270.0 MB)");
  });

  it("a base that loads in a blink (svc-tiny, 1.9 MB) gets one line, not eleven", () => {
    assert.deepEqual(linesFor(1.9e6, 40), ["loading the base model: 100% (1.9 MB of 1.9 MB)"]);
  });
});
