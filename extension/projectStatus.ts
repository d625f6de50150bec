/**
 * Keeps the `svc.state` context key (which welcome the views show) in step with the workspace:
 * folder, `src/svc/index.ts`, the `svc` CLI, credentials and, once those exist, the trainer
 * manifest (a subprocess, so it is asked for after activation, never on its path).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import * as vscode from "vscode";
import { credentialsPath } from "../sdk/paths.js";
import type { Manifest } from "../ui-shared/transport.js";
import { canReachCloud, projectState, type ProjectState } from "./core/projectState.js";
import { resolveSvcCli, type ResolvedCli } from "./core/svcCli.js";
import type { StudioAccess } from "./studioAccess.js";

export class ProjectStatus implements vscode.Disposable {
  private current: ProjectState = "noFolder";
  private manifest: Manifest | undefined;
  private resolvedCli: ResolvedCli | undefined;
  /** In flight or done; shared by overlapping refreshes so a focus change cannot drop the answer. */
  private manifestRequest: Promise<Manifest> | undefined;
  private readonly changed = new vscode.EventEmitter<ProjectState>();
  private readonly manifestChanged = new vscode.EventEmitter<Manifest>();
  private readonly disposables: vscode.Disposable[] = [this.changed, this.manifestChanged];
  readonly onDidChange = this.changed.event;
  /** A fresh manifest arrived (the trainer, its datasets); fires even when the state stays the same. */
  readonly onDidChangeManifest = this.manifestChanged.event;

  constructor(private readonly studio: StudioAccess) {
    // Project files and the CLI appearing (after `npm i -D svc-studio` or `svc init`) change the welcome.
    const watcher = vscode.workspace.createFileSystemWatcher("**/{src/svc/index.ts,node_modules/.bin/svc}");
    this.disposables.push(
      watcher,
      watcher.onDidCreate(() => void this.refresh()),
      watcher.onDidDelete(() => void this.refresh()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => void this.refresh()),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration("svc") && void this.refresh()),
      // Credentials live outside the workspace (`~/.svc`); `svc login` in a terminal is noticed on return.
      vscode.window.onDidChangeWindowState((e) => e.focused && void this.refresh({ keepManifest: true })),
    );
  }

  get state(): ProjectState {
    return this.current;
  }
  get folder(): string | undefined {
    return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  }
  get cli(): ResolvedCli | undefined {
    return this.resolvedCli;
  }
  get trainerManifest(): Manifest | undefined {
    return this.manifest;
  }
  /** The trees call the studio only when it can reach a cloud without minting anything. */
  get canReachCloud(): boolean {
    return canReachCloud(this.current);
  }

  /** Re-reads the facts; the manifest is asked again unless `keepManifest`. Resolves once the state is final. */
  async refresh(options: { keepManifest?: boolean } = {}): Promise<ProjectState> {
    const folder = this.folder;
    this.resolvedCli = resolveSvcCli(folder);
    this.studio.configure(folder, this.resolvedCli);
    if (!options.keepManifest) {
      this.manifest = undefined;
      this.manifestRequest = undefined;
    }
    const facts = {
      folder,
      hasTrainerSource: folder !== undefined && existsSync(path.join(folder, "src", "svc", "index.ts")),
      hasCli: this.resolvedCli !== undefined,
      hasCredentials: existsSync(credentialsPath()),
    };
    this.set(projectState({ ...facts, manifest: this.manifest }));
    if (canReachCloud(this.current) && !this.manifest) {
      const request = (this.manifestRequest ??= this.studio
        .endpoint()
        .then((studio) => studio.api.getManifest())
        .catch((error: unknown): Manifest => ({ status: "error", error: error instanceof Error ? error.message : String(error) })));
      const manifest = await request;
      if (request !== this.manifestRequest) return this.current; // a newer refresh owns the state
      this.manifest = manifest;
      this.set(projectState({ ...facts, manifest }));
      this.manifestChanged.fire(manifest);
    }
    return this.current;
  }

  private set(state: ProjectState): void {
    const changed = state !== this.current;
    this.current = state;
    void vscode.commands.executeCommand("setContext", "svc.state", state);
    if (changed) this.changed.fire(state);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
