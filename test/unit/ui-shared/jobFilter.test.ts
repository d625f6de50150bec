import assert from "node:assert/strict";
import { emptyState, filterJobs, STATUS_CHIPS } from "../../../ui-shared/jobFilter.js";

const jobs = [
  { id: "aaaa1111", name: "Support Bot v1", status: "completed" as const },
  { id: "bbbb2222", name: "support-bot-v2", status: "running" as const },
  { id: "cccc3333", name: "Poetry", status: "failed" as const },
];

describe("ui-shared/jobFilter", () => {
  it("searches name or id case-insensitively, in server order", () => {
    assert.deepEqual(filterJobs(jobs, "SUPPORT", "all").map((j) => j.id), ["aaaa1111", "bbbb2222"]);
    assert.deepEqual(filterJobs(jobs, "CCC", "all").map((j) => j.id), ["cccc3333"]);
    assert.deepEqual(filterJobs(jobs, "  ", "all").length, 3);
  });

  it("combines the search with the status chip", () => {
    assert.deepEqual(filterJobs(jobs, "support", "running").map((j) => j.id), ["bbbb2222"]);
    assert.deepEqual(filterJobs(jobs, "", "queued"), []);
  });

  it("lists the chips in the spec's order", () => {
    assert.deepEqual(STATUS_CHIPS.map((c) => c.label), ["All", "Running", "Completed", "Queued", "Failed", "Cancelled"]);
  });

  it("tells No jobs yet from No matches", () => {
    assert.equal(emptyState(0, 0), "No jobs yet");
    assert.equal(emptyState(3, 0), "No matches");
    assert.equal(emptyState(3, 1), undefined);
  });
});
