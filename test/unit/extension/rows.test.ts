import assert from "node:assert/strict";
import type { Deployment, DeploymentKey, Job, JobStatus } from "../../../sdk/wire.js";
import { endpointContextValue, endpointDescription, keyContextValue, keyDescription, sortKeys } from "../../../extension/core/endpointRows.js";
import { groupJobsByStatus, jobContextValue, jobTooltip, statusIcon } from "../../../extension/core/jobRows.js";
import { keyLastUsed, relativeTime } from "../../../ui-shared/format.js";

const job = (id: string, status: JobStatus, name = `job-${id}`): Job => ({
  id,
  projectId: "p",
  name,
  status,
  config: {},
  artifactCount: 3,
  error: null,
  createdAt: "2025-01-01T10:00:00.000Z",
  startedAt: null,
  finishedAt: null,
});

const deployment = (over: Partial<Deployment> = {}): Deployment => ({
  id: "d1",
  projectId: "p",
  slug: "demo",
  target: { kind: "adapter", jobId: "1234abcd-0000-0000-0000-000000000000" },
  authMode: "fixed_api_key",
  enabled: true,
  customDomain: null,
  runRetentionMode: "none",
  runRetentionDays: 0,
  corsOrigins: null,
  url: "http://demo.localhost:7871",
  localUrl: "http://127.0.0.1:7871/d/demo",
  createdAt: "2025-01-01T10:00:00.000Z",
  ...over,
});

const key = (id: string, enabled: boolean, createdAt: string): DeploymentKey => ({
  id,
  deploymentId: "d1",
  label: `key ${id}`,
  prefix: "svc_live_abc",
  enabled,
  lastUsedAt: null,
  createdAt,
  expiresAt: null,
  limits: { requestsPerMinute: null, tokensPerMinute: null },
  budget: null,
  rotatedTo: null,
  usage: { requests: 0, promptTokens: 0, completionTokens: 0, minuteRequests: 0, minuteTokens: 0, budgetTokens: 0 },
});

describe("extension/core/jobRows", () => {
  it("groups by status, live work first, keeping server order inside a group", () => {
    const groups = groupJobsByStatus([job("a", "completed"), job("b", "running"), job("c", "completed"), job("d", "failed")]);
    assert.deepEqual(
      groups.map((g) => [g.label, g.jobs.map((j) => j.id)]),
      [
        ["Running", ["b"]],
        ["Completed", ["a", "c"]],
        ["Failed", ["d"]],
      ],
    );
  });

  it("gives every state its own icon", () => {
    const ids = (["queued", "running", "completed", "failed", "cancelled"] as const).map((s) => statusIcon(s).id);
    assert.equal(new Set(ids).size, 5);
    assert.equal(statusIcon("running").id, "loading~spin");
  });

  it("formats relative time coarsely", () => {
    const t0 = Date.parse("2025-01-01T10:00:00.000Z");
    const at = (ms: number) => relativeTime("2025-01-01T10:00:00.000Z", t0 + ms);
    assert.equal(at(5_000), "just now");
    assert.equal(at(5 * 60_000), "5 min ago");
    assert.equal(at(3 * 3_600_000), "3 h ago");
    assert.equal(at(2 * 86_400_000), "2 d ago");
    assert.equal(relativeTime("not a date"), "");
  });

  it("says when a key was last used, or that it never was", () => {
    const t0 = Date.parse("2025-01-01T10:00:00.000Z");
    assert.equal(keyLastUsed("2025-01-01T09:57:00.000Z", t0), "used 3 min ago");
    assert.equal(keyLastUsed(null, t0), "never used");
  });

  it("puts the full id in the tooltip and the status in the context value", () => {
    assert.match(jobTooltip(job("abc-123", "completed")), /ID: abc-123/);
    assert.match(jobTooltip(job("abc-123", "completed")), /Artifacts: 3/);
    assert.equal(jobContextValue({ status: "running" }), "svc.job.running");
  });
});

describe("extension/core/endpointRows", () => {
  it("describes an endpoint with the spec's target summary, auth mode and badge", () => {
    assert.equal(endpointDescription(deployment()), "Final adapter (job 1234abcd) · fixed_api_key · enabled");
    assert.equal(
      endpointDescription(deployment({ enabled: false, authMode: "none", target: { kind: "base_model", name: "svc-tiny" } })),
      "Base model: svc-tiny · none · disabled",
    );
    assert.equal(endpointContextValue({ enabled: false }), "svc.endpoint.disabled");
  });

  it("marks revoked keys and lists active ones first, newest first", () => {
    assert.equal(keyDescription(key("a", false, "2025")), "svc_live_abc… · revoked");
    assert.equal(keyContextValue({ enabled: false }), "svc.key.revoked");
    const sorted = sortKeys([key("old", true, "2025-01-01"), key("revoked", false, "2025-03-01"), key("new", true, "2025-02-01")]);
    assert.deepEqual(
      sorted.map((k) => k.id),
      ["new", "old", "revoked"],
    );
  });
});
