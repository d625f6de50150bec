/**
 * What a panel's requests do on the host: each `api/<name>` request is the same studio call the SPA
 * makes (through the same HttpTransport, so both surfaces share one code path and one error
 * envelope), one per route of the studio's contract; and streams are the studio's streams read in the host.
 */
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
  /** Opens the browser studio at a hash route (VS Code has no Playground panel). */
  openInStudio(hash: string): Promise<void>;
  /** Opens (or focuses) a job's Job detail panel. */
  openJob(jobId: string): Promise<void>;
}

/** A file a studio download route answers, its bytes not read yet. */
export interface DownloadedFile {
  /** The name the studio gave (Content-Disposition). */
  name: string;
  body: ReadableStream<Uint8Array>;
}

/** Hash routes a panel may open in the studio: the Playground with a job's adapter (alone, or beside its base model), nothing else. */
const STUDIO_HASH = /^#\/playground\?job=[\w%.-]+(&compare=base)?$/;

/** What a panel changed, so the trees (and other panels) can reload. */
export type PanelChange = { kind: "job"; id: string } | { kind: "deployment"; id: string };

export function panelRequestHandlers(studio: () => Promise<StudioEndpoint>, host: PanelHost, onChange: (change: PanelChange) => void = () => {}): RequestHandlers {
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
      return { path: (await host.saveStream({ name, body: response.body })) ?? null };
    },
    "host/openInStudio": async ({ hash }) => {
      // A webview's message decides only which job; the page it opens is fixed here.
      if (!STUDIO_HASH.test(hash)) throw new TransportError(400, "bad_request", `Not a studio page a panel may open: ${hash}`);
      await host.openInStudio(hash);
      return null;
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
