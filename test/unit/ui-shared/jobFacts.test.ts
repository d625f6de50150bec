import assert from "node:assert/strict";
import type { Job } from "../../../sdk/wire.js";
import { baseModelOf, hasPlaygroundAdapter, jobDurationMs, jobDurationText } from "../../../ui-shared/jobFacts.js";
import { formatDuration } from "../../../ui-shared/format.js";

const at = (s: number) => new Date(Date.UTC(2025, 0, 1, 0, 0, s)).toISOString();
const job = (fields: Partial<Job>): Job => ({
  id: "j",
  projectId: "p",
  name: "n",
  status: "queued",
  config: {},
  artifactCount: 0,
  error: null,
  createdAt: at(0),
  startedAt: null,
  finishedAt: null,
  ...fields,
});

describe("ui-shared/jobFacts", () => {
  it("formats durations", () => {
    assert.equal(formatDuration(0), "0 s");
    assert.equal(formatDuration(44_600), "45 s");
    assert.equal(formatDuration(192_000), "3 min 12 s");
    assert.equal(formatDuration(7_500_000), "2 h 05 min");
  });

  it("duration runs from startedAt to finishedAt, or to now while running", () => {
    assert.equal(jobDurationMs(job({ status: "completed", startedAt: at(10), finishedAt: at(70) })), 60_000);
    assert.equal(jobDurationText(job({ status: "completed", startedAt: at(10), finishedAt: at(70) })), "1 min 00 s");
    const now = Date.parse(at(25));
    assert.equal(jobDurationMs(job({ status: "running", startedAt: at(10) }), now), 15_000);
    assert.equal(jobDurationText(job({ status: "running", startedAt: at(10) }), now), "15 s so far");
  });

  it("no duration before the start, or for a job that ended without starting", () => {
    assert.equal(jobDurationText(job({ status: "queued" })), "—");
    assert.equal(jobDurationText(job({ status: "cancelled", finishedAt: at(5) })), "—");
    assert.equal(jobDurationText(job({ status: "failed", startedAt: at(5) })), "—", "ended but never told when: unknown");
    assert.equal(jobDurationText(undefined), "—");
  });

  it("base model is config.model; the playground needs a completed job", () => {
    assert.equal(baseModelOf(job({ config: { model: "svc-tiny" } })), "svc-tiny");
    assert.equal(baseModelOf(job({ config: { model: 3 } as unknown as Job["config"] })), undefined);
    assert.equal(baseModelOf(undefined), undefined);
    assert.equal(hasPlaygroundAdapter("completed"), true);
    assert.equal(hasPlaygroundAdapter("failed"), false);
    assert.equal(hasPlaygroundAdapter(undefined), false);
  });
});
