/**
 * Registers every command. Each runs inside one error boundary: whatever it throws — a cloud
 * error keeps the cloud's message (409 slug taken, 404, ...) — is shown to the user, and the
 * command resolves with undefined instead of rejecting.
 */
import * as vscode from "vscode";
import type { Services } from "../services.js";
import { createEndpoint, copyEndpointUrl, openEndpoint, setAuthMode, toggleEndpoint } from "./endpointCommands.js";
import { cancelJob, compareJobs, deleteJob, openJob, runTraining } from "./jobCommands.js";
import { issueKey, revokeKey } from "./keyCommands.js";
import { openPlayground, previewDatasets } from "./panelCommands.js";
import { continueAnonymously, initProject, installCli, openStudioInBrowser, refresh, signIn } from "./workspaceCommands.js";

/** `arg` is the clicked tree item (or what a caller passed); `more` is a tree's whole multi-selection. */
type Handler = (s: Services, arg: unknown, more?: unknown) => unknown;

export const COMMANDS: Record<string, Handler> = {
  "svc.runTraining": (s) => runTraining(s),
  "svc.openJob": openJob,
  "svc.cancelJob": cancelJob,
  "svc.deleteJob": deleteJob,
  "svc.compareJobs": compareJobs,
  "svc.previewDatasets": (s) => previewDatasets(s),
  "svc.openPlayground": openPlayground,
  "svc.createEndpoint": createEndpoint,
  "svc.openEndpoint": openEndpoint,
  "svc.toggleEndpoint": (s, arg) => toggleEndpoint(s, arg),
  "svc.enableEndpoint": (s, arg) => toggleEndpoint(s, arg, true),
  "svc.disableEndpoint": (s, arg) => toggleEndpoint(s, arg, false),
  "svc.setAuthMode": setAuthMode,
  "svc.copyEndpointUrl": copyEndpointUrl,
  "svc.issueKey": issueKey,
  "svc.revokeKey": revokeKey,
  "svc.refresh": (s) => refresh(s),
  "svc.openStudioInBrowser": (s) => openStudioInBrowser(s),
  "svc.installCli": (s) => installCli(s),
  "svc.initProject": (s) => initProject(s),
  "svc.signIn": (s) => signIn(s),
  "svc.continueAnonymously": (s) => continueAnonymously(s),
};

export function registerCommands(s: Services): vscode.Disposable[] {
  return Object.entries(COMMANDS).map(([id, handler]) =>
    vscode.commands.registerCommand(id, async (arg: unknown, more: unknown) => {
      try {
        return await handler(s, arg, more);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        void s.prompts.error(message);
        return undefined;
      }
    }),
  );
}
