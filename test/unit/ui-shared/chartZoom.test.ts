import assert from "node:assert/strict";
import { describeWindow, fitWindow, panWindow, zoomAround, zoomFromDrag, MIN_SPAN_STEPS } from "../../../ui-shared/chartZoom.js";

const full = { min: 0, max: 1000 };
const area = { left: 50, top: 0, width: 500, height: 100 };

describe("ui-shared/chartZoom", () => {
  it("a drag selects the step range under it, in either direction", () => {
    assert.deepEqual(zoomFromDrag(100, 300, full, area, full), { min: 100, max: 500 });
    assert.deepEqual(zoomFromDrag(300, 100, full, area, full), { min: 100, max: 500 });
    // On a zoomed plot the pixels map into the zoomed window.
    assert.deepEqual(zoomFromDrag(50, 300, { min: 100, max: 200 }, area, full), { min: 100, max: 150 });
  });

  it("a click or a tiny drag is not a zoom; a drag past the plot is clipped to it", () => {
    assert.equal(zoomFromDrag(200, 203, full, area, full), undefined);
    assert.deepEqual(zoomFromDrag(0, 150, full, area, full), { min: 0, max: 200 });
    assert.equal(zoomFromDrag(0, 900, full, area, full), undefined, "everything selected: no zoom");
  });

  it("never zooms narrower than two steps", () => {
    const narrow = fitWindow({ min: 500, max: 500.5 }, full)!;
    assert.equal(narrow.max - narrow.min, MIN_SPAN_STEPS);
    assert.equal((narrow.min + narrow.max) / 2, 500.25);
    assert.deepEqual(fitWindow({ min: -5, max: 0.5 }, full), { min: 0, max: 5.5 }, "kept inside the full extent");
  });

  it("keyboard zoom keeps the centre step in place and zooms out back to everything", () => {
    assert.deepEqual(zoomAround(full, full, 500, 0.5), { min: 250, max: 750 });
    assert.deepEqual(zoomAround(full, full, 0, 0.5), { min: 0, max: 500 });
    assert.deepEqual(zoomAround({ min: 250, max: 750 }, full, 250, 0.5), { min: 250, max: 500 });
    assert.equal(zoomAround({ min: 250, max: 750 }, full, 500, 2), undefined, "the whole extent again");
    assert.deepEqual(zoomAround({ min: 800, max: 900 }, full, 900, 3), { min: 600, max: 900 }, "the centre stays at the right edge");
    assert.deepEqual(zoomAround({ min: 850, max: 950 }, full, 850, 3), { min: 700, max: 1000 }, "shifted back inside");
  });

  it("pans by a fraction of the window and stops at the ends", () => {
    assert.deepEqual(panWindow({ min: 100, max: 200 }, full, 0.5), { min: 150, max: 250 });
    assert.deepEqual(panWindow({ min: 100, max: 200 }, full, -2), { min: 0, max: 100 });
    assert.deepEqual(panWindow({ min: 900, max: 1000 }, full, 1), { min: 900, max: 1000 });
    assert.equal(panWindow(full, full, 0.5), undefined);
  });

  it("describes a window", () => {
    assert.equal(describeWindow({ min: 120.4, max: 479.6 }), "Steps 120–480");
  });
});
