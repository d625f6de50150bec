import assert from "node:assert/strict";
import { emptyState, filterJobs, recentJobs, STATUS_CHIPS } from "../../../ui-shared/jobFilter.js";
import type { Job } from "../../../sdk/wire.js";

const jobs = [
  { id: "aaaa1111", name: "Support Bot v1", status: "completed" as const },
  { id: "bbbb2222", name: "support-bot-v2", status: "running" as const },
  { id: "cccc3333", name: "Poetry", status: "failed" as const },
];

describe("ui-shared/jobFilter", () => {
  it("searches name or id case-insensitively, in server order", () => {
    assert.deepEqual(
      filterJobs(jobs, "SUPPORT", "all").map((j) => j.id),
      ["aaaa1111", "bbbb2222"],
    );
    assert.deepEqual(
      filterJobs(jobs, "CCC", "all").map((j) => j.id),
      ["cccc3333"],
    );
    assert.deepEqual(filterJobs(jobs, "  ", "all").length, 3);
  });

  it("combines the search with the status chip", () => {
    assert.deepEqual(
      filterJobs(jobs, "support", "running").map((j) => j.id),
      ["bbbb2222"],
    );
    assert.deepEqual(filterJobs(jobs, "", "queued"), []);
  });

  it("lists the chips in the spec's order", () => {
    assert.deepEqual(
      STATUS_CHIPS.map((c) => c.label),
      ["All", "Running", "Completed", "Queued", "Failed", "Cancelled"],
    );
  });

  it("tells No jobs yet from No matches", () => {
    assert.equal(emptyState(0, 0), "No jobs yet");
    assert.equal(emptyState(3, 0), "No matches");
    assert.equal(emptyState(3, 1), undefined);
  });

  it("Recent jobs: the five newest, newest first, whatever order they came in", () => {
    const at = (id: string, minute: number) =>
      ({ id, name: id, status: "completed", createdAt: `2025-01-01T00:${String(minute).padStart(2, "0")}:00.000Z` }) as Job;
    const list = [at("a", 1), at("g", 7), at("c", 3), at("f", 6), at("b", 2), at("e", 5), at("d", 4), at("h", 7)];
    assert.deepEqual(
      recentJobs(list).map((j) => j.id),
      ["h", "g", "f", "e", "d"],
      "same time: the larger id first, as the server orders",
    );
    assert.deepEqual(
      recentJobs(list.slice(0, 2)).map((j) => j.id),
      ["g", "a"],
    );
    assert.equal(list[0].id, "a", "the input is not reordered");
  });
});
