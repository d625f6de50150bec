/**
 * The one interface every Svelte component talks to (STYLE.md 4). The browser SPA implements it
 * with fetch/EventSource against the studio (`studioHttpClient.ts`); VS Code panels implement it
 * with postMessage to the extension host (`webview/transport/vscode.ts`). Components never know
 * which one they have.
 */
import type { RouteMethods } from "../sdk/api/route.js";
import type { ChatRequest, DownloadRequest, StudioApi } from "../sdk/api/studio.js";
import type { ChatUsage } from "./chatChunks.js";
import type { JobStreamEvent } from "./eventLog.js";

export type { Manifest } from "../sdk/manifest.js";
export type { ChatMessage } from "../sdk/api/inference.js";
export type { ChatRequest, DownloadRequest, StudioEnvironment, TrainingStatus } from "../sdk/api/studio.js";
export type { ChatUsage } from "./chatChunks.js";

/** Callbacks of a job event subscription. */
export interface JobEventHandlers {
  /** A named training event arrived (any frame also clears the "interrupted" banner). */
  onEvent(event: JobStreamEvent): void;
  /**
   * Many events arrived in one frame (the history when the page opens, or a backlog after a
   * reconnect), in order: apply them in one pass, with the same result as calling onEvent on each.
   */
  onEvents(events: readonly JobStreamEvent[]): void;
  /** The connection broke; the transport keeps retrying on its own. */
  onError(): void;
  /** The server sent `end`: the stream is closed for good and will not reconnect. */
  onEnd(): void;
}

/** A file the user downloads from a view (the job chart's CSV / JSON export). */
export interface SaveFileRequest {
  /** Suggested file name, e.g. `run-0123abcd-metrics.csv`. */
  name: string;
  /** MIME type of the content, e.g. `text/csv`. */
  mimeType: string;
  /** The whole file, as UTF-8 text. */
  text: string;
}

/** Stops a subscription; safe to call more than once. */
export type Unsubscribe = () => void;

/** Error of any transport call: HTTP status (0 for network/timeout), upstream code and readable message. */
export class TransportError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "TransportError";
  }
}

/** Readable text for any thrown value, for banners and inline form errors. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A download saved: its file name, and where it went when the UI can know (VS Code's save dialog; a browser keeps that to itself). */
export interface SavedDownload {
  name: string;
  path?: string;
}

/** One method per JSON route of the studio's contract (sdk/api/studio.ts: `getJob(id)`, ...), and the streams and clipboard. */
export interface Transport extends RouteMethods<StudioApi> {
  /**
   * Runs the project's trainer (`POST /api/train`), calling `onOutput` with each chunk of raw
   * stdout+stderr until the process ends. Rejects with status 409 when a run is already in flight,
   * and with code `run_failed` when `svc start` exited with an error (e.g. before any job existed).
   */
  runTraining(onOutput: (text: string) => void, signal?: AbortSignal): Promise<void>;
  /**
   * Live training events of one job (SSE `GET /api/jobs/:id/events?batch=1`), replayed from the
   * start; the history arrives in bulk through `onEvents`.
   */
  subscribeJobEvents(jobId: string, handlers: JobEventHandlers): Unsubscribe;
  /**
   * Streams a chat completion (`POST /api/inference/chat`), calling `onDelta` with each text piece; resolves with the
   * reply's token counts as the server reported them (undefined when it did not, or the stream was stopped first).
   */
  streamChat(request: ChatRequest, onDelta: (text: string) => void, signal?: AbortSignal): Promise<ChatUsage | undefined>;
  /** Copies text; VS Code webviews route this through the host because the clipboard API may be blocked. */
  copyText(text: string): Promise<void>;
  /**
   * Saves a file for the user: a browser download in the SPA; in VS Code a save dialog on the host
   * (a webview cannot download). Resolves once saved, or when the user dismissed the dialog.
   */
  saveFile(file: SaveFileRequest): Promise<void>;
  /**
   * Saves what a download route of the studio answers (sdk/api/studio.ts `studioDownloads`: an adapter), under the
   * name the studio gives: the SPA fetches it with the token header and saves the blob; in VS Code the host asks
   * where, then streams it into the file. Resolves once saved (with the file's name, and in VS Code its path) or with
   * undefined when dismissed; rejects with the studio's error (404).
   */
  saveDownload(request: DownloadRequest): Promise<SavedDownload | undefined>;
}
