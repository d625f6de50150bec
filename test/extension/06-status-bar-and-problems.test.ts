/**
 * The running job in the status bar (step and loss, click opens its panel, hidden when nothing
 * runs) and the datasets' invalid lines in the Problems panel, against the real studio, cloud and
 * worker. The workspace is edited for a test and restored after it.
 */
import assert from "node:assert/strict";
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import * as vscode from "vscode";
import type { TrainingOutcome } from "../../extension/core/trainingOutput.js";
import { eventually, svcApi, workspaceFolder } from "./support/extension.js";
import { signedIn } from "./support/fixtures.js";
import { ScriptedPrompts } from "./support/scriptedPrompts.js";

/** Rewrites a workspace file for one test; `restore()` puts the original back. */
async function editFile(relative: string, edit: (text: string) => string): Promise<{ uri: vscode.Uri; restore(): Promise<void> }> {
  const file = path.join(workspaceFolder(), relative);
  const original = await readFile(file, "utf8");
  await writeFile(file, edit(original));
  return { uri: vscode.Uri.file(file), restore: () => writeFile(file, original) };
}

const svcDiagnostics = (uri: vscode.Uri) => vscode.languages.getDiagnostics(uri).filter((d) => d.source === "svc");

describe("status bar and Problems", () => {
  before(() => signedIn());
  beforeEach(async () => {
    (await svcApi()).services.prompts = new ScriptedPrompts();
  });

  it("the Problems panel marks a dataset's invalid lines with their line numbers, and clears when they are fixed", async () => {
    const { services } = await svcApi();
    assert.deepEqual(services.project.trainerManifest?.status === "ok" && services.project.trainerManifest.trainer.datasets, [
      "data/train.jsonl",
      "data/eval.jsonl",
    ]);
    const tooLong = JSON.stringify({
      messages: [
        { role: "user", content: "x".repeat(200) },
        { role: "assistant", content: "y" },
      ],
    });
    const lines = (await readFile(path.join(workspaceFolder(), "data", "eval.jsonl"), "utf8")).trimEnd().split("\n");
    const edited = await editFile("data/eval.jsonl", () => [lines[0], "{not json", lines[1], tooLong, ...lines.slice(2)].join("\n") + "\n");
    try {
      // The file watcher notices the change on disk: no command is needed.
      const diagnostics = await eventually("two problems in data/eval.jsonl", () => {
        const found = svcDiagnostics(edited.uri);
        return found.length === 2 && found;
      });
      assert.deepEqual(
        diagnostics.map((d) => [d.range.start.line, d.range.start.character, d.range.end.character, d.message, d.severity]),
        [
          [1, 0, "{not json".length, "not valid JSON", vscode.DiagnosticSeverity.Error],
          [
            3,
            0,
            tooLong.length,
            "conversation is 206 tokens, longer than the model's context of 160 tokens (1 token = 1 byte)",
            vscode.DiagnosticSeverity.Error,
          ],
        ],
      );
      assert.deepEqual(svcDiagnostics(vscode.Uri.file(path.join(workspaceFolder(), "data", "train.jsonl"))), [], "the valid training set has none");
    } finally {
      await edited.restore();
    }
    await eventually("the problems to clear", () => svcDiagnostics(edited.uri).length === 0);
  });

  it("an unsaved edit in an open dataset is checked as typed, and Run Training re-checks before it starts", async () => {
    const { services } = await svcApi();
    const uri = vscode.Uri.file(path.join(workspaceFolder(), "data", "train.jsonl"));
    const document = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(document);
    try {
      await editor.edit((builder) => builder.insert(new vscode.Position(0, 0), "oops\n"));
      const [problem] = await eventually("a problem on the typed line", () => svcDiagnostics(uri).length === 1 && svcDiagnostics(uri));
      assert.deepEqual([problem.range.start.line, problem.message], [0, "not valid JSON"]);
      // Cleared by hand, then Run Training's refresh (before anything starts) puts it back.
      services.datasets.collection.clear();
      assert.equal(svcDiagnostics(uri).length, 0);
      await services.datasets.refresh();
      assert.equal(svcDiagnostics(uri).length, 1);
    } finally {
      await vscode.commands.executeCommand("workbench.action.files.revert");
      await vscode.commands.executeCommand("workbench.action.closeActiveEditor");
    }
    await eventually("the problems to clear after the revert", () => svcDiagnostics(uri).length === 0);
  });

  it("while a job trains the status bar shows its step and loss, opens its panel on click, and hides when it ends", async function () {
    this.timeout(300_000);
    const { services } = await svcApi();
    assert.equal(services.trainingStatus.snapshot.visible, false, "nothing runs yet");
    // A long run (stopped below), so the item is seen mid-run whatever the machine's speed.
    const source = await editFile("src/svc/index.ts", (text) => text.replace(/maxSteps: \d+/, "maxSteps: 5000"));
    await rm(path.join(workspaceFolder(), ".svc", "build"), { recursive: true, force: true });
    let run: Thenable<TrainingOutcome | undefined> | undefined;
    try {
      run = vscode.commands.executeCommand<TrainingOutcome>("svc.runTraining");
      const shown = await eventually(
        "the status bar to show a step and a loss",
        () => {
          const snapshot = services.trainingStatus.snapshot;
          return snapshot.visible && /^\$\(sync~spin\) svc: step \d+\/5000 · loss \d+\.\d{4}$/.test(snapshot.text ?? "") && snapshot;
        },
        120_000,
      );
      assert.match(shown.tooltip ?? "", /^quickstart-json-answers: step \d+\/5000, loss \d+\.\d{4}/);
      const job = (await (await services.studio.endpoint()).api.listJobs()).find((j) => j.id === shown.jobId);
      assert.equal(job?.status, "running");
      // Its step moves on: the item follows the live event stream, not a snapshot.
      const firstStep = Number(/step (\d+)/.exec(shown.text!)![1]);
      await eventually("a later step", () => Number(/step (\d+)/.exec(services.trainingStatus.snapshot.text ?? "")?.[1] ?? 0) > firstStep);
      // ...while its click stays the very same command: VS Code drops the arguments of a replaced
      // one, so a click landing between two steps would otherwise do nothing.
      assert.equal(services.trainingStatus.snapshot.command, shown.command, "the item's command is set once per job");

      await vscode.commands.executeCommand("workbench.action.closeAllEditors");
      assert.equal(services.jobPanels.isOpen(shown.jobId!), false);
      await vscode.commands.executeCommand(shown.command!.command, ...(shown.command!.arguments ?? []));
      assert.ok(services.jobPanels.isOpen(shown.jobId!), "a click opens the job's panel");

      await (await services.studio.endpoint()).api.stopTraining();
      const outcome = await run;
      assert.equal(outcome?.finalStatus, "cancelled");
      await eventually("the status bar to hide", () => !services.trainingStatus.snapshot.visible);
    } finally {
      if (run) await (await services.studio.endpoint()).api.stopTraining();
      await source.restore();
      await rm(path.join(workspaceFolder(), ".svc", "build"), { recursive: true, force: true });
    }
  });
});
