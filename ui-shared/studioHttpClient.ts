/**
 * Browser transport: fetch and EventSource against the studio's own origin (DESIGN.md 8).
 * Every `/api/*` call carries the per-launch token from `<meta name="svc-studio-token">`;
 * EventSource cannot set headers, so its URL carries `?studioToken=`.
 */
import type { ErrorEnvelope } from "../sdk/wire.js";
import { installRouteMethods, pathOf, type AnyRoute, type CallParts, type RouteMethods } from "../sdk/api/route.js";
import { RUN_ID_HEADER, studioApi, studioDownloads, studioStreams, type DownloadRequest, type StudioApi } from "../sdk/api/studio.js";
import { fileNameOf } from "../sdk/api/files.js";
import { JOB_EVENT_TYPES, parseEventData } from "./eventLog.js";
import { decodeJobEventBatch, JOB_EVENT_BATCH } from "./jobEventBatch.js";
import { SseParser } from "../sdk/sseParser.js";
import { chunkDelta, chunkError, chunkUsage, completionText, type ChatUsage } from "./chatChunks.js";
import {
  TransportError,
  type ChatRequest,
  type JobEventHandlers,
  type SaveFileRequest,
  type SavedDownload,
  type Transport,
  type Unsubscribe,
} from "./transport.js";

export const TOKEN_HEADER = "X-Svc-Studio-Token";
export const TOKEN_META = "svc-studio-token";

export function readStudioToken(doc: Document = document): string {
  return doc.querySelector<HTMLMetaElement>(`meta[name="${TOKEN_META}"]`)?.content ?? "";
}

/** The JSON routes' methods (`listJobs`, `getJob`, ...), installed from the contract at the end of this file. */
export interface HttpTransport extends RouteMethods<StudioApi> {}

export class HttpTransport implements Transport {
  constructor(
    private readonly token: string,
    private readonly baseUrl = "",
  ) {}

  private async send(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { [TOKEN_HEADER]: this.token };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new TransportError(0, "network_error", `Couldn't reach the studio server (${String(error)}).`);
    }
    if (!response.ok) throw await errorFrom(response);
    return response;
  }

  /** One call of a studio route: its JSON answer, or undefined for a route that answers 204. */
  async call(route: AnyRoute, { params, body }: CallParts): Promise<unknown> {
    const response = await this.send(route.method, pathOf(route.path, params), body);
    return route.response ? response.json() : undefined;
  }

  async runTraining(onOutput: (text: string) => void, signal?: AbortSignal): Promise<void> {
    const response = await this.send(studioStreams.train.method, studioStreams.train.path, undefined, signal);
    const runId = response.headers.get(RUN_ID_HEADER);
    await readText(response, onOutput);
    // The body is svc start's raw output only; the studio tells how this run ended.
    if (runId === null) return;
    const { last } = await this.getTrainingStatus();
    if (last?.id === runId && last.exitCode !== 0) throw new TransportError(500, "run_failed", runFailedMessage(last.exitCode));
  }

  subscribeJobEvents(jobId: string, handlers: JobEventHandlers): Unsubscribe {
    // `batch=1`: the history comes as a few `batch` frames, not one message per event (issue 15).
    const url = `${this.baseUrl}${pathOf(studioStreams.jobEvents.path, { id: jobId })}?studioToken=${encodeURIComponent(this.token)}&batch=1`;
    const source = new EventSource(url);
    let closed = false;
    const close = () => {
      closed = true;
      source.close();
    };
    for (const type of JOB_EVENT_TYPES) {
      source.addEventListener(type, (message: MessageEvent<string>) => {
        if (!closed) handlers.onEvent({ id: message.lastEventId, type, raw: message.data, data: parseEventData(message.data) });
      });
    }
    source.addEventListener(JOB_EVENT_BATCH, (message: MessageEvent<string>) => {
      if (!closed) handlers.onEvents(decodeJobEventBatch(message.data));
    });
    source.addEventListener("end", () => {
      close(); // SPEC 6: on `end` the client closes the stream, no reconnect.
      handlers.onEnd();
    });
    // EventSource retries by itself (with Last-Event-ID); the view only shows the banner.
    source.onerror = () => {
      if (!closed) handlers.onError();
    };
    return close;
  }

  async streamChat(request: ChatRequest, onDelta: (text: string) => void, signal?: AbortSignal): Promise<ChatUsage | undefined> {
    // Asks for a stream explicitly: a body without `stream: true` gets one JSON completion back. The last chunk
    // carries the reply's token counts (the Playground's tokens/s).
    const body = { ...request, stream: true, stream_options: { include_usage: true } };
    const response = await this.send(studioStreams.chat.method, studioStreams.chat.path, body, signal);
    if (/^application\/json/i.test(response.headers.get("content-type") ?? "")) {
      // A server (or proxy) that answered with a whole completion anyway: show it as one delta.
      const whole = await response.text();
      const text = completionText(whole);
      if (text) onDelta(text);
      return chunkUsage(whole);
    }
    const parser = new SseParser();
    let done = false;
    let usage: ChatUsage | undefined;
    await readText(response, (text) => {
      for (const message of parser.feed(text)) {
        if (done) return;
        if (message.data === "[DONE]") {
          done = true;
          return;
        }
        const problem = chunkError(message.data);
        if (problem !== undefined) throw new TransportError(502, "stream_error", problem);
        const delta = chunkDelta(message.data);
        if (delta) onDelta(delta);
        else usage = chunkUsage(message.data) ?? usage;
      }
    });
    return usage;
  }

  copyText(text: string): Promise<void> {
    return copyWithFallback(text);
  }

  async saveFile(file: SaveFileRequest): Promise<void> {
    downloadInBrowser(file);
  }

  /**
   * The answer of a download route with its body unread; the VS Code host streams it into a file. Its query's
   * undefined members are left out; an error answer rejects with the studio's status and message.
   */
  openDownload(request: DownloadRequest, signal?: AbortSignal): Promise<Response> {
    const route = studioDownloads[request.route];
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(request.query)) if (value !== undefined) query.set(name, String(value));
    return this.send(route.method, `${pathOf(route.path, request.params)}?${query}`, undefined, signal);
  }

  /**
   * A browser cannot send the token header on a plain link, and the token may not ride in a URL
   * (the studio's CSRF rule): so the file is fetched with the header and saved from a blob, which
   * holds it in memory once. Adapters are a few MB; a download ticket would be the way for files
   * that are not.
   */
  async saveDownload(request: DownloadRequest): Promise<SavedDownload> {
    const response = await this.openDownload(request);
    const name = fileNameOf(response.headers.get("content-disposition")) ?? "download";
    saveBlob(await response.blob(), name);
    return { name };
  }
}

/** A browser download of generated text: an object URL on a temporary `<a download>`. */
export function downloadInBrowser(file: SaveFileRequest): void {
  saveBlob(new Blob([file.text], { type: `${file.mimeType};charset=utf-8` }), file.name);
}

/** Saves a blob as a browser download named `name`. */
function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.style.display = "none";
  document.body.append(link);
  link.click();
  link.remove();
  // The browser resolves the URL when the download starts; a minute later it is only memory held.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

installRouteMethods(HttpTransport.prototype, studioApi, (transport, route, parts) => transport.call(route, parts));

/** What the Run training panel says when `svc start` ended with an error (its own output says why). */
export function runFailedMessage(exitCode: number | null): string {
  if (exitCode === null) return "The run was stopped before it finished.";
  // 130: svc start was interrupted (Stop, Ctrl-C) and cancelled its job.
  if (exitCode === STOPPED_EXIT_CODE) return "The run was stopped: its job was cancelled.";
  return `The run failed: svc start exited with code ${exitCode}. Its output below says why.`;
}

/** `svc start`'s exit code after an interrupt (SIGINT/SIGTERM, the Stop button): the shell's 128 + SIGINT. */
export const STOPPED_EXIT_CODE = 130;

/** Builds a TransportError from the studio's `{"error":{"code","message"}}` envelope (or whatever came back). */
export async function errorFrom(response: Response): Promise<TransportError> {
  const text = await response.text().catch(() => "");
  try {
    const envelope = JSON.parse(text) as Partial<ErrorEnvelope>;
    if (envelope.error && typeof envelope.error.message === "string") {
      return new TransportError(response.status, envelope.error.code ?? "error", envelope.error.message);
    }
  } catch {
    // Not JSON: fall through to the raw text.
  }
  return new TransportError(response.status, "http_error", text.trim() || `${response.status} ${response.statusText}`);
}

/** Reads a response body as UTF-8 text chunks as they arrive. */
async function readText(response: Response, onText: (text: string) => void): Promise<void> {
  if (!response.body) {
    onText(await response.text());
    return;
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const text = decoder.decode(value, { stream: true });
      if (text) onText(text);
    }
    const tail = decoder.decode();
    if (tail) onText(tail);
  } finally {
    reader.releaseLock();
  }
}

/** navigator.clipboard needs a secure context; 127.0.0.1 is one, but fall back to execCommand anyway. */
export async function copyWithFallback(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    if (!ok) throw new TransportError(0, "clipboard", "Couldn't copy to the clipboard.");
  }
}
