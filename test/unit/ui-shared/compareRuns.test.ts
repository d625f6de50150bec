import assert from "node:assert/strict";
import type { Job } from "../../../sdk/wire.js";
import { COMPARE_MAX, compareSelectionProblem, summaryRows, toggleSelection } from "../../../ui-shared/compareRuns.js";

describe("ui-shared/compareRuns", () => {
  it("selects in click order, deselects, and refuses a sixth job", () => {
    let selection: string[] = [];
    for (const id of ["a", "b", "c"]) selection = toggleSelection(selection, id);
    assert.deepEqual(toggleSelection(selection, "b"), ["a", "c"]);
    for (const id of ["d", "e"]) selection = toggleSelection(selection, id);
    assert.equal(selection.length, COMPARE_MAX);
    assert.deepEqual(toggleSelection(selection, "f"), selection);
  });

  it("says why a selection cannot be compared", () => {
    assert.equal(compareSelectionProblem(["a"]), "Pick at least 2 jobs to compare (you picked 1).");
    assert.equal(compareSelectionProblem(["a", "b"]), undefined);
    assert.equal(compareSelectionProblem(["a", "b", "c", "d", "e", "f"]), "Compare at most 5 jobs at once (you picked 6).");
  });

  it("summarises each run from its job and series", () => {
    const t = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
    const job = { status: "completed", startedAt: t(0), finishedAt: t(30) } as Job;
    const rows = summaryRows(
      [job, undefined],
      [
        {
          loss: [
            { step: 1, value: 3 },
            { step: 2, value: 2.5 },
          ],
          evalLoss: [
            { step: 1, value: 2.9 },
            { step: 2, value: 3.1 },
          ],
        },
        { loss: [], evalLoss: [] },
      ],
    );
    assert.deepEqual(rows, [
      { label: "Status", values: ["completed", "—"] },
      { label: "Duration", values: ["30 s", "—"] },
      { label: "Steps", values: ["2", "—"] },
      { label: "Final loss", values: ["2.5000", "—"] },
      { label: "Final eval loss", values: ["3.1000", "—"] },
      { label: "Best eval loss", values: ["2.9000", "—"] },
    ]);
  });

  it("adds final and best eval token accuracy once a run logged it", () => {
    const rows = summaryRows(
      [undefined, undefined],
      [
        {
          loss: [],
          evalLoss: [],
          evalTokenAccuracy: [
            { step: 1, value: 0.5 },
            { step: 2, value: 0.875 },
            { step: 3, value: 0.75 },
          ],
        },
        { loss: [], evalLoss: [] },
      ],
    );
    assert.deepEqual(rows.slice(-2), [
      { label: "Final eval token accuracy", values: ["75.0%", "—"] },
      { label: "Best eval token accuracy", values: ["87.5%", "—"] },
    ]);
  });
});
