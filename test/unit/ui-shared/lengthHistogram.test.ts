/** The Datasets view's histogram of conversation lengths (ui-shared/lengthHistogram.ts). */
import assert from "node:assert/strict";
import { binText, lengthHistogram, niceWidth } from "../../../ui-shared/lengthHistogram.js";

describe("length histogram", () => {
  it("rounds bin widths to 1, 2 or 5 × 10^k, never below one token", () => {
    assert.deepEqual(
      [0.3, 1, 1.5, 3, 7, 12, 180].map((raw) => niceWidth(raw)),
      [1, 1, 2, 5, 10, 20, 200],
    );
  });

  it("counts every length once, in (from, to] bins, up to the limit when it is near", () => {
    const h = lengthHistogram([1, 10, 11, 80, 160, 161], 160, 17);
    assert.equal(h.binWidth, 10);
    assert.equal(
      h.bins.reduce((sum, b) => sum + b.count, 0),
      6,
    );
    assert.deepEqual(
      h.bins.slice(0, 2).map((b) => b.count),
      [2, 1],
      "10 is in (0, 10], 11 in (10, 20]",
    );
    assert.equal(h.bins.find((b) => b.from === 150)?.count, 1, "exactly the limit fits");
    assert.equal(h.bins.find((b) => b.from === 150)?.overLimit, false);
    assert.deepEqual(h.bins.at(-1), { from: 160, to: 170, count: 1, overLimit: true });
    assert.equal(h.overLimit, 1);
    assert.equal(h.limitShown, true);
    assert.equal(h.top, 170);
    assert.equal(h.maxCount, 2);
  });

  it("ends at the longest conversation when the limit is far above it", () => {
    const h = lengthHistogram([30, 40, 50], 4096);
    assert.equal(h.limitShown, false);
    assert.ok(h.top >= 50 && h.top < 100, `top ${h.top}`);
    assert.equal(h.overLimit, 0);
    assert.ok(h.bins.every((b) => !b.overLimit));
  });

  it("draws an empty chart for no lengths", () => {
    const h = lengthHistogram([], null);
    assert.equal(h.maxCount, 0);
    assert.equal(h.limitShown, false);
    assert.ok(h.bins.length >= 1);
  });

  it("reads a bin in words", () => {
    assert.equal(binText({ from: 70, to: 80, count: 12, overLimit: false }), "71–80 tokens: 12 conversations");
    assert.equal(binText({ from: 4, to: 5, count: 1, overLimit: false }), "5 tokens: 1 conversation");
  });
});
