/**
 * What a panel's requests do on the host: each `api/<name>` request is the same studio call the SPA
 * makes (through the same HttpTransport, so both surfaces share one code path and one error
 * envelope), one per route of the studio's contract; and streams are the studio's streams read in the host.
 */
import path from "node:path";
import { fileNameOf } from "../../sdk/api/files.js";
import { studioApi, studioDownloads } from "../../sdk/api/studio.js";
import type { HttpTransport } from "../../ui-shared/studioHttpClient.js";
import { callParts } from "../../ui-shared/protocol/common.js";
import { TransportError, type SaveFileRequest } from "../../ui-shared/transport.js";
import type { RequestHandlers, StreamRunner } from "./panelConnection.js";
import { streamJobEvents } from "./jobEventStream.js";

export interface StudioEndpoint {
  url: string;
  token: string;
  api: HttpTransport;
}

/** What the host does for a panel beyond the studio API (VS Code's clipboard, dialogs, other panels). */
export interface PanelHost {
  copyText(text: string): Promise<void>;
  /** Asks where to save and writes the file; the path written, or undefined when the user dismissed the dialog. */
  saveFile(file: SaveFileRequest): Promise<string | undefined>;
  /** Asks where to save a download named `name` and streams `body` into it (cancelling it when dismissed); as saveFile. */
  saveStream(file: DownloadedFile): Promise<string | undefined>;
  /**
   * An Ollama or LM Studio export (a zip of the folder `svc export` writes): asks for the folder and unpacks `body`
   * into it as it arrives; the folder, or undefined when the user dismissed the dialog.
   */
  saveFolder(file: DownloadedFile & { layout: "ollama" | "lmstudio" }): Promise<string | undefined>;
  /** Opens (or re-targets) the Playground panel on a job's adapter, beside its base model with `compare`. */
  openPlayground(jobId: string, compare: boolean): Promise<void>;
  /** Opens a project file in an editor at a 1-based line; `file` is already checked to be inside the project. */
  openProjectFile(file: string, line: number): Promise<void>;
  /** The project folder, to resolve a dataset a panel names (undefined: no folder open). */
  projectFolder(): string | undefined;
  /** Opens (or focuses) a job's Job detail panel. */
  openJob(jobId: string): Promise<void>;
  /** Asks (a modal) and deletes the job; true once deleted, false when the user kept it. */
  deleteJob(jobId: string): Promise<boolean>;
}

/** A file a studio download route answers, its bytes not read yet. */
export interface DownloadedFile {
  /** The name the studio gave (Content-Disposition). */
  name: string;
  body: ReadableStream<Uint8Array>;
}

/** What a panel changed, so the trees (and other panels) can reload. */
export type PanelChange = { kind: "job"; id: string } | { kind: "deployment"; id: string };

export function panelRequestHandlers(
  studio: () => Promise<StudioEndpoint>,
  host: PanelHost,
  onChange: (change: PanelChange) => void = () => {},
): RequestHandlers {
  const handlers: RequestHandlers = {
    "host/copyText": async ({ text }) => {
      await host.copyText(text);
      return null;
    },
    "host/saveFile": async (file) => ({ path: (await host.saveFile(file)) ?? null }),
    "host/saveDownload": async (request) => {
      // Opened before the dialog: a 404 is told at once, and the dialog gets the studio's name for the file.
      if (!Object.hasOwn(studioDownloads, request.route)) throw new TransportError(400, "bad_request", `Not a studio download: ${String(request.route)}`);
      const response = await (await studio()).api.openDownload(request);
      const name = fileNameOf(response.headers.get("content-disposition")) ?? "download";
      if (!response.body) throw new TransportError(502, "empty_download", `The studio sent no bytes for ${name}.`);
      // Ollama's and LM Studio's exports are folders: saved as one, not as the zip the browser gets.
      const layout = request.route === "downloadMergedModel" ? request.query.format : undefined;
      if (layout === "ollama" || layout === "lmstudio") return { path: (await host.saveFolder({ name, body: response.body, layout })) ?? null };
      return { path: (await host.saveStream({ name, body: response.body })) ?? null };
    },
    "host/openPlayground": async ({ jobId, compare }) => {
      if (typeof jobId !== "string" || jobId === "") throw new TransportError(400, "bad_request", "A job id is required to open the Playground on a job.");
      await host.openPlayground(jobId, compare === true);
      return null;
    },
    "host/openDatasetLine": async ({ file, line }) => {
      // A webview's message names a file: only one inside the project opens, at a line that exists or the first.
      const full = projectFile(host.projectFolder(), file);
      await host.openProjectFile(full, Number.isInteger(line) && line >= 1 ? line : 1);
      return null;
    },
    "host/deleteJob": async ({ jobId }) => {
      if (typeof jobId !== "string" || jobId === "") throw new TransportError(400, "bad_request", "A job id is required to delete a job.");
      return { deleted: await host.deleteJob(jobId) };
    },
    "host/openJob": async ({ jobId }) => {
      await host.openJob(jobId);
      return null;
    },
  };
  // One `api/<name>` handler per route of the studio's contract: the same call through the same client as the SPA.
  const apiHandlers = handlers as Record<string, (params: Record<string, unknown>) => Promise<unknown>>;
  for (const [name, route] of Object.entries(studioApi)) {
    apiHandlers[`api/${name}`] = async (params) => {
      const parts = callParts(params);
      const result = await (await studio()).api.call(route, parts);
      // A call that is not a GET changed the job or deployment it names (or created), so trees and panels reload.
      const id = parts.params?.id ?? (result as { id?: string } | undefined)?.id;
      if (route.method !== "GET" && id) {
        if (route.path.startsWith("/api/jobs")) onChange({ kind: "job", id });
        else if (route.path.startsWith("/api/deployments")) onChange({ kind: "deployment", id });
      }
      return result ?? null;
    };
  }
  return handlers;
}

export function panelStreamRunner(studio: () => Promise<StudioEndpoint>): StreamRunner {
  return async (spec, sink, signal) => {
    const { url, token, api } = await studio();
    switch (spec.kind) {
      case "jobEvents":
        return streamJobEvents({ studioUrl: url, token, jobId: spec.jobId }, { event: sink.data, events: sink.data, interrupted: sink.interrupted }, signal);
      case "training":
        return api.runTraining(sink.data, signal);
      case "chat": {
        const usage = await api.streamChat(spec.request, sink.data, signal);
        if (usage) sink.data({ usage });
        return;
      }
    }
  };
}

/** `file` (relative to the project, as the trainer names it) as an absolute path inside `folder`; a 400 for anything else. */
export function projectFile(folder: string | undefined, file: unknown): string {
  if (!folder) throw new TransportError(409, "no_folder", "Open the project's folder to open its datasets.");
  if (typeof file !== "string" || file === "") throw new TransportError(400, "bad_request", "A dataset file is required.");
  const full = path.resolve(folder, file);
  const inside = path.relative(folder, full);
  if (inside === "" || inside.startsWith("..") || path.isAbsolute(inside)) throw new TransportError(400, "bad_request", `Not a file of this project: ${file}`);
  return full;
}
