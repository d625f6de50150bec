/** Reaching the extension under test from a suite running in the same extension host. */
import * as vscode from "vscode";
import type { SvcExtensionApi } from "../../../extension/extension.js";
import { pollUntil } from "../../support/poll.js";

export const EXTENSION_ID = "svc.svc-studio";

export async function svcApi(): Promise<SvcExtensionApi> {
  const extension = vscode.extensions.getExtension<SvcExtensionApi>(EXTENSION_ID);
  if (!extension) throw new Error(`${EXTENSION_ID} is not loaded`);
  const api = await extension.activate();
  await api.initialized;
  return api;
}

/** Waits for a condition the extension reaches asynchronously (a job finishing, a tree reloading). */
export function eventually<T>(description: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 60_000): Promise<T> {
  return pollUntil(check, { description, timeoutMs, intervalMs: 100 });
}

export function workspaceFolder(): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  if (!folder) throw new Error("the tests need a workspace folder");
  return folder;
}
