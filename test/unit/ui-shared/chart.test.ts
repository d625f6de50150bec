import assert from "node:assert/strict";
import {
  decimate,
  hoverReadout,
  insertByStep,
  lowerBoundByStep,
  linePath,
  nearestIndex,
  niceTicks,
  stepExtent,
  valueAtStep,
  valueExtent,
  windowIndices,
  xForStep,
  yForValue,
  type ChartPoint,
} from "../../../ui-shared/chart.js";

const area = { left: 0, top: 0, width: 100, height: 50 };

describe("ui-shared/chart", () => {
  it("scales y min-max with the max at the top", () => {
    const points: ChartPoint[] = [
      { step: 1, value: 2 },
      { step: 2, value: 4 },
    ];
    const values = valueExtent(points)!;
    assert.deepEqual(values, { min: 2, max: 4 });
    assert.equal(yForValue(4, values, area), 0);
    assert.equal(yForValue(2, values, area), 50);
    const steps = stepExtent(points)!;
    assert.equal(xForStep(1, steps, area), 0);
    assert.equal(xForStep(2, steps, area), 100);
  });

  it("widens a flat series and a single point instead of dividing by zero", () => {
    const flat = valueExtent([
      { step: 1, value: 2 },
      { step: 2, value: 2 },
    ])!;
    assert.ok(flat.max > flat.min);
    assert.equal(yForValue(2, flat, area), 25);
    const zero = valueExtent([{ step: 5, value: 0 }])!;
    assert.deepEqual(zero, { min: -0.5, max: 0.5 });
    const oneStep = stepExtent([{ step: 5, value: 0 }])!;
    assert.equal(xForStep(5, oneStep, area), 50);
    assert.equal(valueExtent([], []), undefined);
  });

  it("decimates 100,000 points to at most four per pixel column, keeping extremes and ends", () => {
    const points = Array.from({ length: 100_000 }, (_, i) => ({ step: i + 1, value: Math.sin(i / 50) + (i === 54_321 ? 10 : 0) }));
    const steps = stepExtent(points)!;
    const wide = { left: 0, top: 0, width: 800, height: 300 };
    const kept = decimate(points, steps, wide);
    const path = linePath(kept, steps, valueExtent(points)!, wide);
    assert.ok(kept.length <= 4 * 801);
    assert.deepEqual(kept[0], points[0]);
    assert.deepEqual(kept[kept.length - 1], points[points.length - 1]);
    assert.ok(
      kept.some((p) => p.step === 54_322),
      "the spike survives",
    );
    for (let i = 1; i < kept.length; i++) assert.ok(kept[i].step > kept[i - 1].step, "ascending, no duplicates");
    assert.ok(path.startsWith("M0 "));
  });

  it("leaves short series untouched", () => {
    const points = [
      { step: 1, value: 1 },
      { step: 2, value: 3 },
    ];
    assert.deepEqual(decimate(points, stepExtent(points)!, area), points);
  });

  it("finds the nearest step by binary search", () => {
    const steps = [10, 20, 30, 50];
    assert.equal(nearestIndex(steps, 0), 0);
    assert.equal(nearestIndex(steps, 14), 0);
    assert.equal(nearestIndex(steps, 15), 0); // tie goes to the lower step
    assert.equal(nearestIndex(steps, 16), 1);
    assert.equal(nearestIndex(steps, 41), 3);
    assert.equal(nearestIndex(steps, 1000), 3);
    assert.equal(nearestIndex([], 3), -1);
  });

  it("hover reports whichever values exist at the nearest step", () => {
    const series = {
      loss: [
        { step: 10, value: 2.3 },
        { step: 20, value: 2.1 },
      ],
      evalLoss: [
        { step: 20, value: 2.4 },
        { step: 25, value: 2.35 },
      ],
    };
    assert.deepEqual(hoverReadout(11, [10, 20, 25], series), { step: 10, values: { loss: 2.3 } });
    assert.deepEqual(hoverReadout(19, [10, 20, 25], series), { step: 20, values: { loss: 2.1, evalLoss: 2.4 } });
    assert.deepEqual(hoverReadout(30, [10, 20, 25], series), { step: 25, values: { evalLoss: 2.35 } });
    assert.equal(hoverReadout(3, [], series), undefined);
  });

  it("hover stays inside a zoom window", () => {
    const series = { loss: [10, 20, 30, 40].map((step) => ({ step, value: step / 10 })) };
    assert.equal(hoverReadout(100, [10, 20, 30, 40], series, { min: 15, max: 32 })?.step, 30);
    assert.equal(hoverReadout(0, [10, 20, 30, 40], series, { min: 15, max: 32 })?.step, 20);
    assert.equal(hoverReadout(0, [10, 20, 30, 40], series, { min: 21, max: 29 }), undefined);
  });

  it("finds values and window indices by binary search", () => {
    const points = [1, 2, 4, 8, 16].map((step) => ({ step, value: step * 2 }));
    assert.equal(valueAtStep(points, 4), 8);
    assert.equal(valueAtStep(points, 5), undefined);
    assert.equal(valueAtStep([], 5), undefined);
    assert.equal(lowerBoundByStep(points, 3), 2);
    assert.equal(lowerBoundByStep(points, 99), 5);
    // Steps 2..8 inclusive are inside; the neighbours 1 and 16 widen the drawn range.
    assert.deepEqual(windowIndices(points, { min: 2, max: 8 }), { first: 1, end: 4, from: 0, to: 5 });
    assert.deepEqual(windowIndices(points, { min: 3, max: 5 }), { first: 2, end: 3, from: 1, to: 4 });
    assert.deepEqual(windowIndices(points, { min: 5, max: 7 }), { first: 3, end: 3, from: 2, to: 4 }, "no point inside: only the neighbours");
    assert.deepEqual(windowIndices(points, { min: 0, max: 100 }), { first: 0, end: 5, from: 0, to: 5 });
  });

  it("decimates a slice exactly like the same points copied out", () => {
    const points = Array.from({ length: 50_000 }, (_, i) => ({ step: i + 1, value: Math.cos(i / 7) * Math.sqrt(i) }));
    const window = { min: 10_000, max: 30_000 };
    const { from, to } = windowIndices(points, window);
    const narrow = { left: 10, top: 0, width: 300, height: 50 };
    assert.deepEqual(decimate(points, window, narrow, from, to), decimate(points.slice(from, to), window, narrow));
    assert.ok(decimate(points, window, narrow, from, to).length <= 4 * 302);
  });

  it("inserts late points in step order and replaces a repeated step", () => {
    const points: ChartPoint[] = [];
    insertByStep(points, { step: 1, value: 1 });
    insertByStep(points, { step: 3, value: 3 });
    insertByStep(points, { step: 2, value: 2 });
    insertByStep(points, { step: 3, value: 4 });
    assert.deepEqual(
      points.map((p) => [p.step, p.value]),
      [
        [1, 1],
        [2, 2],
        [3, 4],
      ],
    );
  });

  it("builds an SVG path", () => {
    const points = [
      { step: 0, value: 0 },
      { step: 1, value: 1 },
    ];
    assert.equal(linePath(points, { min: 0, max: 1 }, { min: 0, max: 1 }, area), "M0 50 L100 0");
  });

  it("produces nice ticks", () => {
    assert.deepEqual(niceTicks({ min: 0, max: 1 }, 5), [0, 0.2, 0.4, 0.6, 0.8, 1]);
    assert.deepEqual(niceTicks({ min: 1, max: 1 }, 5), []);
  });
});
