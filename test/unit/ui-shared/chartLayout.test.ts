import assert from "node:assert/strict";
import { layoutPlot, type PlotSeriesInput } from "../../../ui-shared/chartLayout.js";
import { emaSmooth } from "../../../ui-shared/ema.js";

const area = { left: 0, top: 0, width: 100, height: 50 };
const pts = (pairs: [number, number][]) => pairs.map(([step, value]) => ({ step, value }));
const vertices = (d: string) => (d.match(/[ML]/g) ?? []).length;
const loss = (points: ReturnType<typeof pts>, extra: Partial<PlotSeriesInput> = {}): PlotSeriesInput => ({ id: "loss", points, markers: "lone", ...extra });
const evals = (points: ReturnType<typeof pts>): PlotSeriesInput => ({ id: "evalLoss", points, markers: "every" });

describe("ui-shared/chartLayout", () => {
  it("draws nothing without a point (the view shows its placeholder)", () => {
    assert.equal(layoutPlot([loss([]), evals([])], { area, steps: { min: 0, max: 1 }, scale: "linear" }), undefined);
  });

  it("SPEC rule 3: training loss is one vertex per point, eval loss has a marker per point, min-max y", () => {
    const layout = layoutPlot(
      [
        loss(
          pts([
            [0, 4],
            [10, 2],
            [20, 3],
          ]),
        ),
        evals(
          pts([
            [10, 3],
            [20, 2.5],
          ]),
        ),
      ],
      { area, steps: { min: 0, max: 20 }, scale: "linear" },
    )!;
    assert.deepEqual(layout.values, { min: 2, max: 4 });
    assert.equal(layout.series[0].path, "M0 0 L50 50 L100 25");
    assert.deepEqual(layout.series[0].markers, [], "a line needs no markers");
    assert.equal(vertices(layout.series[1].path), 2);
    assert.deepEqual(layout.series[1].markers, [
      { x: 50, y: 25 },
      { x: 100, y: 37.5 },
    ]);
  });

  it("a lone training point gets a marker, since its line draws nothing", () => {
    const layout = layoutPlot([loss(pts([[5, 2]]))], { area, steps: { min: 4.75, max: 5.25 }, scale: "linear" })!;
    assert.deepEqual(layout.series[0].markers, [{ x: 50, y: 25 }]);
  });

  it("a zoom window scales y to the points inside it and keeps one neighbour on each side for the line", () => {
    const points = pts([
      [0, 100],
      [10, 3],
      [20, 2],
      [30, 1],
      [40, -100],
    ]);
    const layout = layoutPlot([loss(points)], { area, steps: { min: 10, max: 30 }, scale: "linear" })!;
    assert.deepEqual(layout.values, { min: 1, max: 3 }, "the off-screen 100 and -100 do not flatten the view");
    assert.equal(vertices(layout.series[0].path), 5, "the line runs on to both edges");
    assert.ok(layout.series[0].path.startsWith("M-50 "), "the left neighbour is outside the area (the plot clips it)");
  });

  it("a window between two points still draws the segment crossing it", () => {
    const layout = layoutPlot(
      [
        loss(
          pts([
            [0, 1],
            [100, 2],
          ]),
        ),
      ],
      { area, steps: { min: 40, max: 60 }, scale: "linear" },
    )!;
    assert.deepEqual(layout.values, { min: 1, max: 2 });
    assert.equal(vertices(layout.series[0].path), 2);
  });

  it("log scale: y in decades, values <= 0 left out and counted", () => {
    const layout = layoutPlot(
      [
        loss(
          pts([
            [1, 10],
            [2, 1],
            [3, 0.1],
            [4, 0],
            [5, -1],
          ]),
        ),
      ],
      { area, steps: { min: 1, max: 5 }, scale: "log" },
    )!;
    assert.deepEqual(layout.values, { min: -1, max: 1 });
    assert.equal(layout.unplottable, 2);
    assert.equal(vertices(layout.series[0].path), 3);
    assert.deepEqual(
      layout.yTicks.map((t) => t.label),
      ["0.1", "0.2", "0.5", "1", "2", "5", "10"],
    );
    assert.equal(layout.yTicks[0].y, 50, "0.1 at the bottom");
    assert.equal(layout.yTicks[3].y, 25, "1 halfway on a log axis");
  });

  it("only non-positive values on a log scale: nothing to draw", () => {
    assert.equal(
      layoutPlot(
        [
          loss(
            pts([
              [1, 0],
              [2, -3],
            ]),
          ),
        ],
        { area, steps: { min: 1, max: 2 }, scale: "log" },
      ),
      undefined,
    );
  });

  it("smoothing adds a smoothed line over the raw one and the y range covers both", () => {
    const raw = pts([
      [1, 1],
      [2, 5],
      [3, 1],
      [4, 5],
    ]);
    const layout = layoutPlot([loss(raw, { smoothed: emaSmooth(raw, 0.6) })], { area, steps: { min: 1, max: 4 }, scale: "linear" })!;
    assert.equal(vertices(layout.series[0].path), 4);
    assert.equal(vertices(layout.series[0].smoothedPath!), 4);
    assert.notEqual(layout.series[0].smoothedPath, layout.series[0].path);
    assert.deepEqual(layout.values, { min: 1, max: 5 });
    assert.equal(layoutPlot([loss(raw)], { area, steps: { min: 1, max: 4 }, scale: "linear" })!.series[0].smoothedPath, undefined);
  });

  it("decimates 100,000 points to a few per pixel column", () => {
    const points = Array.from({ length: 100_000 }, (_, i) => ({ step: i + 1, value: 3 + Math.sin(i / 500) }));
    const wide = { left: 56, top: 12, width: 800, height: 218 };
    const layout = layoutPlot([loss(points)], { area: wide, steps: { min: 1, max: 100_000 }, scale: "linear" })!;
    assert.ok(vertices(layout.series[0].path) <= 4 * 801);
    assert.ok(layout.xTicks.length >= 2 && layout.xTicks.every((t) => Number.isInteger(Number(t.label))));
    assert.equal(layout.xTicks[layout.xTicks.length - 1].anchor, "end", "the last label near the right edge anchors at its end");
  });
});
