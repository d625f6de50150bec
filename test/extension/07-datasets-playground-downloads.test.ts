/**
 * Issue 12's Datasets preview, Playground and adapter downloads in VS Code's panels: Preview
 * Datasets (the panel asking the studio for the dry run's preview, a problem's line opening the
 * dataset there, nothing outside the project), Open Playground (from a completed job, a Job panel's
 * "Compare with base model", the palette), an adapter saved from a panel through the save dialog, and
 * a panel's Ollama export unpacked into the folder the dialog names.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import * as vscode from "vscode";
import { panelRequestHandlers } from "../../extension/core/panelApi.js";
import type { PanelMessageEvent } from "../../extension/panels/detailPanels.js";
import { vscodePanelHost } from "../../extension/panels/panelHost.js";
import { eventually, svcApi, workspaceFolder } from "./support/extension.js";
import { completedJob, signedIn } from "./support/fixtures.js";
import { ScriptedPrompts } from "./support/scriptedPrompts.js";

/** The methods a kind of panel's views sent since `start`, for the panel `id`. */
function recordMessages(source: { onDidReceiveMessage: vscode.Event<PanelMessageEvent> }, id: string): { methods(): string[]; dispose(): void } {
  const seen: string[] = [];
  const subscription = source.onDidReceiveMessage((e) => e.id === id && seen.push(e.method));
  return { methods: () => seen, dispose: () => subscription.dispose() };
}

describe("Datasets and Playground panels, adapter downloads", () => {
  let prompts: ScriptedPrompts;
  beforeEach(async () => {
    prompts = new ScriptedPrompts();
    (await svcApi()).services.prompts = prompts;
  });
  const hostHandlers = async () => {
    const { services } = await svcApi();
    return panelRequestHandlers(
      () => services.studio.endpoint(),
      vscodePanelHost(() => services),
    );
  };

  it("Preview Datasets opens one panel that asks the studio for the preview: the dry run's report of each dataset", async function () {
    this.timeout(120_000);
    await signedIn();
    const { services } = await svcApi();
    const recorder = recordMessages(services.datasetsPanels, "datasets");
    try {
      assert.equal(await vscode.commands.executeCommand<boolean>("svc.previewDatasets"), true);
      assert.deepEqual(prompts.errors(), []);
      assert.ok(services.datasetsPanels.isOpen("datasets"));
      await eventually("the Datasets view's preview request", () => recorder.methods().includes("api/getDatasetPreview"));
      assert.equal(recorder.methods()[0], "webview/ready");
    } finally {
      recorder.dispose();
    }
    // What the view is answered, through the same handler.
    const preview = await (await hostHandlers())["api/getDatasetPreview"]!({});
    assert.equal(preview.status, "ok", JSON.stringify(preview));
    if (preview.status !== "ok") return;
    assert.equal(preview.report.trainer, "quickstart-json-answers");
    assert.deepEqual(
      preview.report.splits.map((s) => [s.split, s.file, s.conversations]),
      [
        ["train", "data/train.jsonl", 137],
        ["eval", "data/eval.jsonl", 20],
      ],
    );
    assert.equal(preview.report.splits[0].preview?.lengths?.length, 137);
    assert.equal(preview.report.splits[0].preview?.rows[0].line, 1);
  });

  it("a problem's line opens the dataset in an editor at that line; a file outside the project is refused", async () => {
    const handlers = await hostHandlers();
    await handlers["host/openDatasetLine"]!({ file: "data/train.jsonl", line: 7 });
    const editor = vscode.window.activeTextEditor;
    assert.equal(editor?.document.uri.fsPath, path.join(workspaceFolder(), "data", "train.jsonl"));
    assert.equal(editor?.selection.active.line, 6, "1-based line 7");
    await assert.rejects(handlers["host/openDatasetLine"]!({ file: "../outside.jsonl", line: 1 }), { status: 400, code: "bad_request" });
    await assert.rejects(handlers["host/openDatasetLine"]!({ file: "/etc/hostname", line: 1 }), { status: 400 });
  });

  it("Open Playground: on a completed job from its tree item, beside its base model from a Job panel, and as it is from the palette", async function () {
    this.timeout(300_000);
    const job = await completedJob();
    const { services } = await svcApi();
    await vscode.commands.executeCommand("workbench.action.closeAllEditors");
    const recorder = recordMessages(services.playgroundPanels, "playground");
    try {
      assert.equal(await vscode.commands.executeCommand<boolean>("svc.openPlayground", { kind: "job", job }), true);
      assert.ok(services.playgroundPanels.isOpen("playground"));
      // The view lists what it can talk to: the jobs (their adapters and checkpoints) and the base models.
      await eventually("the Playground's target lists", () => ["api/listJobs", "api/listModels"].every((m) => recorder.methods().includes(m)));
      const handlers = await hostHandlers();
      // A Job panel's "Compare with base model": the same one panel, now side by side, reading the job's base model.
      await handlers["host/openPlayground"]!({ jobId: job.id, compare: true });
      await eventually("the base model looked up", () => recorder.methods().includes("api/getJob"));
      assert.deepEqual(services.playgroundPanels.openIds, ["playground"]);
      await assert.rejects(handlers["host/openPlayground"]!({ jobId: "", compare: false }), { status: 400 });
      // From the palette with the panel open: shown as it is, its conversation kept (no new ready).
      const readies = recorder.methods().filter((m) => m === "webview/ready").length;
      assert.equal(await vscode.commands.executeCommand<boolean>("svc.openPlayground"), true);
      assert.equal(recorder.methods().filter((m) => m === "webview/ready").length, readies);
    } finally {
      recorder.dispose();
    }
  });

  it("a panel's adapter download streams into the file the user chose; a dismissed dialog writes nothing", async function () {
    this.timeout(300_000);
    const job = await completedJob();
    const { services } = await svcApi();
    const artifacts = await (await services.studio.endpoint()).api.listArtifacts(job.id);
    const gguf = artifacts.find((a) => a.name === "adapter.gguf");
    assert.ok(gguf, "the job has its final GGUF adapter");
    const handlers = await hostHandlers();
    const target = vscode.Uri.file(path.join(workspaceFolder(), "exports", "my-adapter.gguf"));
    prompts.answerSaves(
      () => target,
      () => undefined,
    );
    const saved = await handlers["host/saveDownload"]!({ route: "downloadAdapter", params: { id: job.id }, query: { format: "gguf" } });
    assert.deepEqual(saved, { path: target.fsPath });
    assert.equal(statSync(target.fsPath).size, gguf.sizeBytes);
    assert.equal(readFileSync(target.fsPath).subarray(0, 4).toString("latin1"), "GGUF");
    assert.equal(existsSync(`${target.fsPath}.part`), false, "renamed once whole");
    assert.equal(
      prompts.saveDialogs[0]?.defaultUri?.fsPath,
      path.join(workspaceFolder(), `quickstart-json-answers-${job.id.slice(0, 8)}-adapter.gguf`),
      "the studio's name, in the workspace",
    );

    const dismissed = await handlers["host/saveDownload"]!({ route: "downloadAdapter", params: { id: job.id }, query: { format: "peft" } });
    assert.deepEqual(dismissed, { path: null });
    await assert.rejects(handlers["host/saveDownload"]!({ route: "downloadAdapter", params: { id: job.id }, query: { format: "gguf", step: 99_999 } }), {
      status: 404,
    });
  });

  it("a panel's Ollama export unpacks into the folder the user chose: the Modelfile beside the base and the adapter", async function () {
    this.timeout(300_000);
    const job = await completedJob();
    const handlers = await hostHandlers();
    const target = vscode.Uri.file(path.join(workspaceFolder(), "exports", "ollama-model"));
    prompts.answerSaves(() => target);
    const saved = await handlers["host/saveDownload"]!({ route: "downloadMergedModel", params: { id: job.id }, query: { format: "ollama" } });
    assert.deepEqual(saved, { path: target.fsPath });
    assert.equal(prompts.saveDialogs[0]?.title, "Folder for the Ollama model");
    const modelfile = readFileSync(path.join(target.fsPath, "Modelfile"), "utf8");
    const [from, adapter] = [/^FROM \.\/(.+)$/m, /^ADAPTER \.\/(.+)$/m].map((line) => modelfile.match(line)?.[1]);
    assert.ok(from && adapter, modelfile);
    assert.deepEqual(readdirSync(target.fsPath).sort(), ["Modelfile", adapter, from].sort());
    for (const file of [from, adapter]) assert.equal(readFileSync(path.join(target.fsPath, file)).subarray(0, 4).toString("latin1"), "GGUF", file);
  });
});
