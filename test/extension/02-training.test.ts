/** Run Training, Open Job, Cancel Job and the Jobs tree against the real cloud and its worker. */
import assert from "node:assert/strict";
import * as vscode from "vscode";
import type { Job } from "../../sdk/wire.js";
import type { TrainingOutcome } from "../../extension/core/trainingOutput.js";
import type { JobTreeNode } from "../../extension/trees/jobsTree.js";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { eventually, svcApi, workspaceFolder } from "./support/extension.js";
import { completedJob, signedIn } from "./support/fixtures.js";
import { ScriptedPrompts } from "./support/scriptedPrompts.js";

async function treeJobs(): Promise<{ group: string; job: Job }[]> {
  const { services } = await svcApi();
  const rows: { group: string; job: Job }[] = [];
  for (const group of await services.jobs.getChildren()) {
    if (group.kind !== "group") continue;
    for (const child of await services.jobs.getChildren(group)) if (child.kind === "job") rows.push({ group: group.group.label, job: child.job });
  }
  return rows;
}

describe("training", () => {
  before(() => signedIn()); // what the activation suite ends in, so this suite also runs alone
  let prompts: ScriptedPrompts;
  beforeEach(async () => {
    prompts = new ScriptedPrompts();
    (await svcApi()).services.prompts = prompts;
  });

  it("Run Training streams svc start, opens the new job while it trains, and ends completed", async () => {
    const { services } = await svcApi();
    const outcome = await vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
    assert.deepEqual(prompts.errors(), []);
    assert.equal(outcome.finalStatus, "completed");
    assert.ok(outcome.jobId);
    assert.ok(services.jobPanels.isOpen(outcome.jobId), "the job panel was opened");
    assert.match(prompts.shown.at(-1)?.message ?? "", /Training completed/);
    await services.jobs.refresh();
    const row = (await treeJobs()).find((r) => r.job.id === outcome.jobId);
    assert.equal(row?.group, "Completed");
    const item = services.jobs.getTreeItem({ kind: "job", job: row!.job } as JobTreeNode);
    assert.equal(item.contextValue, "svc.job.completed");
    assert.match(String(item.tooltip), new RegExp(`ID: ${outcome.jobId}`));
    assert.equal((item.iconPath as vscode.ThemeIcon).id, "pass");
    assert.equal(item.command?.command, "svc.openJob");
    // Every run of the trainer has its name: the short id tells the rows apart, by eye and by screen reader.
    assert.match(String(item.description), new RegExp(`^${outcome.jobId.slice(0, 8)} · `));
    assert.match(item.accessibilityInformation?.label ?? "", new RegExp(`^quickstart-json-answers, ${outcome.jobId.slice(0, 8)}, completed, `));
  });

  it("a second Run Training while one is in flight shows the studio's 409 message", async () => {
    const first = vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
    const second = vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
    const outcomes = await Promise.all([first, second]);
    assert.equal(outcomes.filter((o) => o?.finalStatus === "completed").length, 1);
    assert.equal(outcomes.filter((o) => o === undefined).length, 1);
    assert.equal(prompts.errors().length, 1);
    assert.match(prompts.errors()[0]!, /already in progress/);
  });

  it("Open Job re-focuses the one panel of a job instead of opening another", async function () {
    this.timeout(300_000); // trains its job when this test runs alone
    const { services } = await svcApi();
    const job = await completedJob();
    await vscode.commands.executeCommand("svc.openJob", { kind: "job", job });
    await vscode.commands.executeCommand("svc.openJob", job.id);
    assert.equal(services.jobPanels.openIds.filter((id) => id === job.id).length, 1);
  });

  it("Open Job from the palette does nothing when the pick is dismissed", async () => {
    const { services } = await svcApi();
    const before = services.jobPanels.openIds.length;
    prompts.answerPicks(() => undefined);
    await vscode.commands.executeCommand("svc.openJob");
    assert.equal(services.jobPanels.openIds.length, before);
  });

  it("Cancel Job cancels a running job after confirmation", async () => {
    const { services } = await svcApi();
    prompts.answerMessages("Cancel Job");
    const run = vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
    const active = await eventually("a queued or running job", async () => {
      await services.jobs.refresh();
      return services.jobs.current.find((job) => job.status === "running" || job.status === "queued");
    });
    const cancelling = await vscode.commands.executeCommand<Job>("svc.cancelJob", { kind: "job", job: active });
    assert.equal(cancelling?.id, active.id);
    // The cloud answers at once and the worker stops within a second; `svc start` then reports it.
    const outcome = await run;
    assert.equal(outcome.jobId, active.id);
    assert.equal(outcome.finalStatus, "cancelled");
    assert.ok(prompts.shown.some((m) => m.level === "warning" && m.modal && /Cancel job/.test(m.message)));
  });

  it("Cancel Job shows the cloud's message for a job that does not exist", async () => {
    prompts.answerMessages("Cancel Job");
    const result = await vscode.commands.executeCommand("svc.cancelJob", "00000000-0000-0000-0000-000000000000");
    assert.equal(result, undefined);
    assert.equal(prompts.errors().length, 1);
    assert.match(prompts.errors()[0]!, /not found/i);
  });

  it("the Jobs tree groups by status with one icon per state", async function () {
    this.timeout(300_000); // trains its job when this test runs alone
    const { services } = await svcApi();
    await completedJob();
    await services.jobs.refresh();
    const rows = await treeJobs();
    const groups = [...new Set(rows.map((row) => row.group))];
    // Every job sits under its own status, groups in the tree's fixed order, each job once.
    const order = ["Running", "Queued", "Completed", "Failed", "Cancelled"];
    assert.deepEqual(
      groups,
      order.filter((label) => groups.includes(label)),
    );
    assert.ok(groups.includes("Completed"));
    for (const row of rows) assert.equal(row.group.toLowerCase(), row.job.status, row.job.id);
    assert.equal(rows.length, services.jobs.current.length);
    const icons = new Set(rows.map((row) => (services.jobs.getTreeItem({ kind: "job", job: row.job } as JobTreeNode).iconPath as vscode.ThemeIcon).id));
    assert.equal(icons.size, groups.length, "one icon per state");
  });

  it("Run Training asks to rebuild when src/svc/ changed since the build, and then trains the edit", async function () {
    this.timeout(300_000);
    const { services } = await svcApi();
    const { api } = await services.studio.endpoint();
    await api.rebuild(); // a build to be older than the edit, whichever tests ran before
    const file = path.join(workspaceFolder(), "src", "svc", "index.ts");
    const original = readFileSync(file, "utf8");
    assert.match(original, /seed: 42/);
    writeFileSync(file, original.replace("seed: 42", "seed: 7"));
    try {
      prompts.answerMessages("Rebuild and Run");
      const outcome = await vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
      const asked = prompts.shown.find((m) => m.level === "warning" && m.modal);
      assert.equal(asked?.message, "src/svc/index.ts changed since the last build: a run now trains the old build (.svc/build/index.mjs).");
      assert.deepEqual(asked?.actions, ["Rebuild and Run", "Run the Old Build"]);
      assert.equal(outcome.finalStatus, "completed");
      assert.equal((await api.getJob(outcome.jobId!)).config.seed, 7, "the edited trainer trained");
    } finally {
      writeFileSync(file, original);
      await api.rebuild(); // later suites train the unedited trainer without being asked
    }
  });
});
