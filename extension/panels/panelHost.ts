/**
 * What the host does for a panel beyond the studio API (`host/*` requests of
 * ui-shared/protocol/common.ts): the clipboard, saving a file the view made or a download of the
 * studio's (a webview cannot download), opening other panels (a job's from Compare Jobs, the Playground from a job's),
 * and a dataset at a problem's line (Datasets).
 */
import { createWriteStream } from "node:fs";
import { mkdir, rename, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import * as vscode from "vscode";
import type { SaveFileRequest } from "../../ui-shared/transport.js";
import type { DownloadedFile, PanelHost } from "../core/panelApi.js";
import type { Services } from "../services.js";
import { deleteJob } from "../commands/jobCommands.js";
import { unpackStoredZip } from "./unpackStoredZip.js";

/** `services` is read when a panel asks, so the panels can be built before the services object exists. */
export function vscodePanelHost(services: () => Services): PanelHost {
  return {
    copyText: (text) => Promise.resolve(vscode.env.clipboard.writeText(text)),
    saveFile: (file) => saveFile(services(), file),
    saveStream: (file) => saveStream(services(), file),
    saveFolder: (file) => saveFolder(services(), file),
    openPlayground: async (jobId, compare) => {
      services().playgroundPanels.show({ jobId, compare });
    },
    openProjectFile: async (file, line) => {
      // The line is 1-based; an editor clamps a line past the end to the last one.
      const position = new vscode.Position(line - 1, 0);
      await vscode.window.showTextDocument(vscode.Uri.file(file), { selection: new vscode.Range(position, position), preview: false });
    },
    projectFolder: () => services().project.folder,
    openJob: async (jobId) => {
      services().jobPanels.show({ jobId });
    },
    deleteJob: (jobId) => deleteJob(services(), jobId),
  };
}

/** A save dialog in the workspace folder with the view's suggested name, then the file written. */
async function saveFile(s: Services, file: SaveFileRequest): Promise<string | undefined> {
  const uri = await askWhereToSave(s, file.name);
  if (!uri) return undefined;
  await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(file.text));
  return saved(s, uri);
}

/**
 * A download (an adapter) streamed into the file the user chose: into `<file>.part` first, renamed
 * once whole, so a failed download leaves no half-written file under the chosen name. A file
 * system other than the local disk (a virtual workspace) gets the bytes in one write.
 */
async function saveStream(s: Services, file: DownloadedFile): Promise<string | undefined> {
  const uri = await askWhereToSave(s, file.name);
  if (!uri) {
    await file.body.cancel();
    return undefined;
  }
  if (uri.scheme === "file") {
    const partial = `${uri.fsPath}.part`;
    try {
      // As workspace.fs.writeFile does: a folder typed into the dialog is created.
      await mkdir(path.dirname(partial), { recursive: true });
      await pipeline(Readable.fromWeb(file.body as WebReadableStream<Uint8Array>), createWriteStream(partial));
      await rename(partial, uri.fsPath);
    } catch (error) {
      await rm(partial, { force: true });
      throw new Error(`Couldn't save ${file.name}: ${(error as Error).message}`);
    }
  } else {
    await vscode.workspace.fs.writeFile(uri, new Uint8Array(await new Response(file.body).arrayBuffer()));
  }
  return saved(s, uri);
}

/**
 * An Ollama or LM Studio export saved as the folder `svc export` writes: a save dialog names the folder (Ollama's
 * `<job>-ollama` in the workspace; LM Studio's models folder, whose `svc/<job>/` the zip fills), and the zip the
 * studio sends is unpacked into it as it arrives.
 */
async function saveFolder(s: Services, file: DownloadedFile & { layout: "ollama" | "lmstudio" }): Promise<string | undefined> {
  const workspace = s.project.folder;
  const defaultUri =
    file.layout === "lmstudio"
      ? vscode.Uri.file(path.join(os.homedir(), ".lmstudio", "models"))
      : workspace
        ? vscode.Uri.joinPath(vscode.Uri.file(workspace), file.name.replace(/\.zip$/i, ""))
        : undefined;
  const uri = await s.prompts.saveDialog({
    title: file.layout === "lmstudio" ? "LM Studio's models folder to export into" : "Folder for the Ollama model",
    defaultUri,
    saveLabel: "Export here",
  });
  if (!uri || uri.scheme !== "file") {
    await file.body.cancel();
    if (uri) throw new Error(`Couldn't save ${file.name}: an export folder must be on this machine's disk`);
    return undefined;
  }
  try {
    await unpackStoredZip(Readable.fromWeb(file.body as WebReadableStream<Uint8Array>), uri.fsPath);
  } catch (error) {
    throw new Error(`Couldn't save ${file.name}: ${(error as Error).message}`);
  }
  return saved(s, uri);
}

async function askWhereToSave(s: Services, name: string): Promise<vscode.Uri | undefined> {
  const folder = s.project.folder;
  const extension = name.includes(".") ? name.slice(name.lastIndexOf(".") + 1) : "";
  return s.prompts.saveDialog({
    title: `Save ${name}`,
    defaultUri: folder ? vscode.Uri.joinPath(vscode.Uri.file(folder), name) : undefined,
    filters: extension ? { [extension.toUpperCase()]: [extension] } : undefined,
    saveLabel: "Save",
  });
}

function saved(s: Services, uri: vscode.Uri): string {
  void s.prompts.info(`Saved ${vscode.workspace.asRelativePath(uri)}.`, {});
  return uri.fsPath;
}
