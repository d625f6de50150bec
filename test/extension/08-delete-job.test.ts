/**
 * Delete Job (issue 26): the command on a job of the Jobs tree and the Job panel's Delete, both
 * behind VS Code's modal. Dismissing keeps the job; a job an endpoint serves is refused with the
 * cloud's message naming it; an ended job goes, its panel closes and the tree forgets it.
 */
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { TrainingOutcome } from "../../extension/core/trainingOutput.js";
import { panelRequestHandlers } from "../../extension/core/panelApi.js";
import { vscodePanelHost } from "../../extension/panels/panelHost.js";
import type { Job } from "../../sdk/wire.js";
import { eventually, svcApi } from "./support/extension.js";
import { completedJob, testEndpoint } from "./support/fixtures.js";
import { ScriptedPrompts } from "./support/scriptedPrompts.js";

/** A cancelled job no endpoint serves: the training suite's, or one started and cancelled here. */
async function cancelledJob(prompts: ScriptedPrompts): Promise<Job> {
  const { services } = await svcApi();
  await completedJob(); // signed in, the project ready
  await services.jobs.refresh();
  const existing = services.jobs.current.find((job) => job.status === "cancelled");
  if (existing) return existing;
  prompts.answerMessages("Cancel Job");
  const run = vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
  const active = await eventually("a queued or running job", async () => {
    await services.jobs.refresh();
    return services.jobs.current.find((job) => job.status === "running" || job.status === "queued");
  });
  await vscode.commands.executeCommand<Job>("svc.cancelJob", { kind: "job", job: active });
  await run;
  await services.jobs.refresh();
  return services.jobs.current.find((job) => job.id === active.id)!;
}

describe("Delete Job", () => {
  let prompts: ScriptedPrompts;
  beforeEach(async () => {
    prompts = new ScriptedPrompts();
    (await svcApi()).services.prompts = prompts;
  });

  it("asks with a modal that says what goes, and keeps the job when dismissed", async () => {
    const { services } = await svcApi();
    const job = await cancelledJob(prompts);
    prompts.answerMessages(undefined);
    const deleted = await vscode.commands.executeCommand<boolean>("svc.deleteJob", { kind: "job", job });
    assert.equal(deleted, false);
    const asked = prompts.shown.find((m) => m.level === "warning" && m.modal && m.message.startsWith("Delete job"));
    assert.equal(asked?.message, `Delete job “${job.name}”?`);
    assert.match(
      asked?.detail ?? "",
      /^Its events, \d+ artifacts? and the datasets no other job uses \([\d.]+ [KMG]?B\) are deleted\. This cannot be undone\.$/,
    );
    assert.deepEqual(asked?.actions, ["Delete Job"]);
    const { api } = await services.studio.endpoint();
    assert.equal((await api.getJob(job.id)).id, job.id, "the job is still there");
  });

  it("refuses a job an endpoint serves, with the cloud's message naming the endpoint", async () => {
    const endpoint = await testEndpoint();
    const job = await completedJob();
    assert.equal(endpoint.target.kind !== "base_model" && endpoint.target.jobId, job.id, "the fixture endpoint serves the fixture job");
    prompts.answerMessages("Delete Job");
    const deleted = await vscode.commands.executeCommand<boolean>("svc.deleteJob", { kind: "job", job });
    assert.equal(deleted, undefined, "the command's error boundary showed the error");
    assert.equal(prompts.errors().length, 1);
    // Other suites may have put endpoints on the same fixture job: the message lists every one.
    assert.match(prompts.errors()[0]!, new RegExp(`is served by deployments? [^;]*"${endpoint.slug}"`));
  });

  it("the Job panel's Delete deletes after the modal, closes the panel and the tree forgets the job", async () => {
    const { services } = await svcApi();
    const job = await cancelledJob(prompts);
    services.jobPanels.show({ jobId: job.id, job });
    assert.ok(services.jobPanels.isOpen(job.id));
    // What the panel's Delete button sends (webview/panels/JobDetailPanel.svelte): the host asks, then deletes.
    const handlers = panelRequestHandlers(
      () => services.studio.endpoint(),
      vscodePanelHost(() => services),
    );
    prompts.answerMessages("Delete Job");
    assert.deepEqual(await handlers["host/deleteJob"]!({ jobId: job.id }), { deleted: true });
    assert.equal(services.jobPanels.isOpen(job.id), false, "its panel closed");
    assert.ok(!services.jobs.current.some((j) => j.id === job.id), "the Jobs tree no longer lists it");
    const { api } = await services.studio.endpoint();
    await assert.rejects(api.getJob(job.id), /not found/);
  });
});
