/**
 * Issue 12's job extras on the VS Code side: Compare Jobs (command, tree multi-selection, the
 * panel speaking the protocol), and what the host does for the Job panel's new controls (the
 * CSV / JSON download through a save dialog). Open in Playground: 07-datasets-playground-downloads.
 */
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as vscode from "vscode";
import type { TrainingOutcome } from "../../extension/core/trainingOutput.js";
import { panelRequestHandlers } from "../../extension/core/panelApi.js";
import type { PanelMessageEvent } from "../../extension/panels/detailPanels.js";
import { vscodePanelHost } from "../../extension/panels/panelHost.js";
import type { Job } from "../../sdk/wire.js";
import { eventually, svcApi, workspaceFolder } from "./support/extension.js";
import { completedJob } from "./support/fixtures.js";
import { ScriptedPrompts } from "./support/scriptedPrompts.js";

/** Two completed jobs: the fixture's, and one more run (made here if the suites before made only one). */
async function twoCompletedJobs(): Promise<[Job, Job]> {
  const first = await completedJob();
  const { services } = await svcApi();
  await services.jobs.refresh();
  const other = services.jobs.current.find((job) => job.status === "completed" && job.id !== first.id);
  if (other) return [first, other];
  const outcome = await vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
  assert.equal(outcome?.finalStatus, "completed", "the second fixture run");
  await services.jobs.refresh();
  return [first, services.jobs.current.find((job) => job.id === outcome.jobId)!];
}

describe("job extras: Compare Jobs, downloads", () => {
  let prompts: ScriptedPrompts;
  before(async function () {
    this.timeout(300_000);
    await twoCompletedJobs();
  });
  beforeEach(async () => {
    prompts = new ScriptedPrompts();
    (await svcApi()).services.prompts = prompts;
  });

  it("Compare Jobs asks for jobs with a multi-select pick and opens one panel that loads each and streams its events", async () => {
    const { services } = await svcApi();
    const [a, b] = await twoCompletedJobs();
    const seen: PanelMessageEvent[] = [];
    const subscription = services.comparePanels.onDidReceiveMessage((e) => seen.push(e));
    try {
      prompts.answerPickMany((items) => items.filter((item) => item.detail === a.id || item.detail === b.id));
      const ids = await vscode.commands.executeCommand<string[]>("svc.compareJobs");
      assert.deepEqual(prompts.errors(), []);
      assert.deepEqual(new Set(ids), new Set([a.id, b.id]));
      assert.ok(services.comparePanels.isOpen("compare"));
      await eventually("the compare view's requests", () => {
        const methods = seen.map((e) => e.method);
        return methods.filter((m) => m === "api/getJob").length >= 2 && methods.filter((m) => m === "stream/open").length >= 2;
      });
      assert.equal(seen[0]?.method, "webview/ready");
    } finally {
      subscription.dispose();
    }
  });

  it("Compare Jobs takes the Jobs tree's multi-selection, and says why one job is not enough", async () => {
    const { services } = await svcApi();
    const [a, b] = await twoCompletedJobs();
    const nodes = [a, b].map((job) => ({ kind: "job", job }));
    // What VS Code passes for a context-menu command on a multi-selection: the clicked node, then all selected.
    const ids = await vscode.commands.executeCommand<string[]>("svc.compareJobs", nodes[1], nodes);
    assert.deepEqual(ids, [a.id, b.id]);
    assert.equal(services.comparePanels.openIds.length, 1, "one Compare Jobs panel, reused");

    const none = await vscode.commands.executeCommand<string[]>("svc.compareJobs", [a.id]);
    assert.equal(none, undefined);
    assert.deepEqual(prompts.errors(), ["Pick at least 2 jobs to compare (you picked 1)."]);
  });

  it("saves a panel's download where the user chose, and writes nothing when the dialog is dismissed", async () => {
    const { services } = await svcApi();
    const host = vscodePanelHost(() => services);
    const handlers = panelRequestHandlers(() => services.studio.endpoint(), host);
    const target = vscode.Uri.file(path.join(workspaceFolder(), "exports", "run-metrics.csv"));
    prompts.answerSaves(
      () => target,
      () => undefined,
    );
    const saved = await handlers["host/saveFile"]!({ name: "run-0123abcd-metrics.csv", mimeType: "text/csv", text: "step,loss\n1,2.5\n" });
    assert.deepEqual(saved, { path: target.fsPath });
    assert.equal(await readFile(target.fsPath, "utf8"), "step,loss\n1,2.5\n");
    assert.equal(
      prompts.saveDialogs[0]?.defaultUri?.fsPath,
      path.join(workspaceFolder(), "run-0123abcd-metrics.csv"),
      "suggested in the workspace, under the view's name",
    );
    assert.deepEqual(prompts.saveDialogs[0]?.filters, { CSV: ["csv"] });
    assert.match(prompts.shown.at(-1)?.message ?? "", /^Saved exports\/run-metrics\.csv\.$/);

    const dismissed = await handlers["host/saveFile"]!({ name: "other.json", mimeType: "application/json", text: "{}" });
    assert.deepEqual(dismissed, { path: null });
  });

  it("a compare panel's job name opens that job's panel", async () => {
    const { services } = await svcApi();
    const [a] = await twoCompletedJobs();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    const handlers = panelRequestHandlers(
      () => services.studio.endpoint(),
      vscodePanelHost(() => services),
    );
    await handlers["host/openJob"]!({ jobId: a.id });
    assert.ok(services.jobPanels.isOpen(a.id));
  });
});
