import assert from "node:assert/strict";
import { scaleTicks, tickLabel, toScale } from "../../../ui-shared/chartScale.js";

describe("ui-shared/chartScale", () => {
  it("places values in scale space; a log scale cannot place zero or negatives", () => {
    assert.equal(toScale(-2, "linear"), -2);
    assert.equal(toScale(100, "log"), 2);
    assert.ok(Number.isNaN(toScale(0, "log")));
    assert.ok(Number.isNaN(toScale(-1, "log")));
  });

  it("linear ticks are the nice 1-2-5 ticks", () => {
    assert.deepEqual(scaleTicks({ min: 0, max: 1 }, "linear", 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  });

  it("log ticks within a decade are nice values of the data", () => {
    const ticks = scaleTicks({ min: Math.log10(1.8), max: Math.log10(3.5) }, "log", 4);
    assert.deepEqual(ticks, [2, 2.5, 3, 3.5]);
    // Where coarse nice steps would leave two labels, finer ones.
    assert.deepEqual(scaleTicks({ min: Math.log10(0.2), max: Math.log10(1.3) }, "log", 5), [0.2, 0.4, 0.6, 0.8, 1, 1.2]);
  });

  it("log ticks across decades are 1, 2, 5 per decade, thinned to powers of ten when crowded", () => {
    assert.deepEqual(scaleTicks({ min: -2, max: 0 }, "log", 5), [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1]);
    assert.deepEqual(scaleTicks({ min: -6, max: 2 }, "log", 5), [1e-6, 1e-4, 0.01, 1, 100]);
  });

  it("labels ticks briefly", () => {
    assert.equal(tickLabel(2.5), "2.5");
    assert.equal(tickLabel(1234.5), "1235");
    assert.equal(tickLabel(0.0001), "1e-4");
    assert.equal(tickLabel(250000), "3e5");
    assert.equal(tickLabel(0), "0");
  });
});
