/**
 * Invalid lines of the project's datasets in the Problems panel: the files the trainer's manifest
 * names, checked by the SDK's dataset check (core/datasetProblems.ts), refreshed when the manifest
 * changes, when a dataset changes on disk or in an editor, and before every Run Training.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import * as vscode from "vscode";
import { datasetFiles, datasetProblems, lengthLimit, PROBLEM_SOURCE } from "./core/datasetProblems.js";
import type { ProjectStatus } from "./projectStatus.js";

/** Typing in a dataset re-checks it once the keys rest this long. */
const EDIT_DEBOUNCE_MS = 300;

export class DatasetDiagnostics implements vscode.Disposable {
  readonly collection = vscode.languages.createDiagnosticCollection(PROBLEM_SOURCE);
  private watcher: vscode.FileSystemWatcher | undefined;
  private watchedPattern = "";
  private editTimer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [this.collection];

  constructor(private readonly project: ProjectStatus) {
    this.disposables.push(
      project.onDidChangeManifest(() => void this.refresh()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (!this.files().some((uri) => uri.toString() === e.document.uri.toString())) return;
        clearTimeout(this.editTimer);
        this.editTimer = setTimeout(() => void this.refresh(), EDIT_DEBOUNCE_MS);
      }),
      { dispose: () => clearTimeout(this.editTimer) },
    );
  }

  /** The dataset files of the project, as URIs. */
  private files(): vscode.Uri[] {
    const folder = this.project.folder;
    return folder ? datasetFiles(this.project.trainerManifest).map((file) => vscode.Uri.file(path.resolve(folder, file))) : [];
  }

  /** Re-checks every dataset now; resolves once the Problems panel shows the result. */
  async refresh(): Promise<void> {
    const files = this.files();
    this.watch(files);
    const limit = lengthLimit(this.project.trainerManifest);
    const results = await Promise.all(files.map(async (uri) => [uri, await this.check(uri, limit)] as const));
    this.collection.clear();
    for (const [uri, diagnostics] of results) if (diagnostics.length > 0) this.collection.set(uri, diagnostics);
  }

  private async check(uri: vscode.Uri, limit: number | undefined): Promise<vscode.Diagnostic[]> {
    // An open editor's text, saved or not, is what the user sees; otherwise the file on disk.
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
    let text: string;
    try {
      text = open ? open.getText() : await readFile(uri.fsPath, "utf8");
    } catch {
      // A missing file is svc start's error to report (it names the field); nothing to mark here.
      return [];
    }
    return datasetProblems(text, limit).map((problem) => {
      const diagnostic = new vscode.Diagnostic(
        new vscode.Range(problem.line, 0, problem.line, problem.endColumn),
        problem.message,
        vscode.DiagnosticSeverity.Error,
      );
      diagnostic.source = PROBLEM_SOURCE;
      return diagnostic;
    });
  }

  /** One watcher over the dataset files, replaced when the manifest names others. */
  private watch(files: vscode.Uri[]): void {
    const folder = this.project.folder;
    const relative = folder ? files.map((uri) => path.relative(folder, uri.fsPath).split(path.sep).join("/")) : [];
    const pattern = relative.length > 0 ? `{${relative.join(",")}}` : "";
    if (pattern === this.watchedPattern) return;
    this.watcher?.dispose();
    this.watcher = undefined;
    this.watchedPattern = pattern;
    if (!folder || !pattern) return;
    this.watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(folder, pattern));
    const changed = () => void this.refresh();
    this.watcher.onDidChange(changed);
    this.watcher.onDidCreate(changed);
    this.watcher.onDidDelete(changed);
  }

  dispose(): void {
    this.watcher?.dispose();
    for (const d of this.disposables) d.dispose();
  }
}
