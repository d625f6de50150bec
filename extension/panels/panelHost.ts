/**
 * What the host does for a panel beyond the studio API (`host/*` requests of
 * ui-shared/protocol/common.ts): the clipboard, saving a file the view made (a webview cannot
 * download), opening the browser studio where VS Code has no such panel (the Playground), and
 * opening a job's panel from the Compare Jobs panel.
 */
import * as vscode from "vscode";
import type { SaveFileRequest } from "../../ui-shared/transport.js";
import { openStudioInBrowser } from "../commands/workspaceCommands.js";
import type { PanelHost } from "../core/panelApi.js";
import type { Services } from "../services.js";

/** `services` is read when a panel asks, so the panels can be built before the services object exists. */
export function vscodePanelHost(services: () => Services): PanelHost {
  return {
    copyText: (text) => Promise.resolve(vscode.env.clipboard.writeText(text)),
    saveFile: (file) => saveFile(services(), file),
    openInStudio: async (hash) => {
      await openStudioInBrowser(services(), hash);
    },
    openJob: async (jobId) => {
      services().jobPanels.show({ jobId });
    },
  };
}

/** A save dialog in the workspace folder with the view's suggested name, then the file written. */
async function saveFile(s: Services, file: SaveFileRequest): Promise<string | undefined> {
  const folder = s.project.folder;
  const extension = file.name.includes(".") ? file.name.slice(file.name.lastIndexOf(".") + 1) : "";
  const uri = await s.prompts.saveDialog({
    title: `Save ${file.name}`,
    defaultUri: folder ? vscode.Uri.joinPath(vscode.Uri.file(folder), file.name) : undefined,
    filters: extension ? { [extension.toUpperCase()]: [extension] } : undefined,
    saveLabel: "Save",
  });
  if (!uri) return undefined;
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(file.text));
  void s.prompts.info(`Saved ${vscode.workspace.asRelativePath(uri)}.`, {});
  return uri.fsPath;
}
