/**
 * Envelope shared by every VS Code webview panel and the extension host (STYLE.md 2 and 3).
 * Three message kinds: command (fire and forget), request (answered by a response with the same
 * id, carrying either `result` or `error`; the view gives up after a timeout) and notification
 * (pushed by the host). The host holds its messages until the view sends `webview/ready`.
 *
 * Per-view contracts (`jobDetail.ts`, `endpointDetail.ts`, `compareJobs.ts`, `datasets.ts`,
 * `playground.ts`) add their state and scoped messages;
 * the studio API calls below are shared because both views render the same components the SPA
 * renders, through the same `Transport` interface (ui-shared/transport.ts).
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { AnyRoute, CallParts, ParamsOf } from "../../sdk/api/route.js";
import type { DownloadRequest, StudioApi } from "../../sdk/api/studio.js";
import type { JobStreamEvent } from "../eventLog.js";
import type { ChatRequest, ChatUsage, SaveFileRequest } from "../transport.js";

/** View -> host, no answer expected. */
export interface CommandMessage<M extends string = string, P = unknown> {
  kind: "command";
  /** Scoped name, e.g. `webview/ready`. */
  method: M;
  /** Method-specific payload. */
  params: P;
}

/** View -> host, answered by exactly one `ResponseMessage` with the same `id`. */
export interface RequestMessage<M extends string = string, P = unknown> {
  kind: "request";
  /** Unique per view instance; matches the response. */
  id: number;
  /** Scoped name, e.g. `api/listJobs`. */
  method: M;
  /** Method-specific parameters. */
  params: P;
}

/** Error of a failed request, mirroring the studio's HTTP error envelope. */
export interface ResponseError {
  /** Upstream HTTP status (0 for failures with no HTTP status, e.g. the host threw). */
  status: number;
  /** Machine-readable code, e.g. `slug_taken`. */
  code: string;
  /** Readable message the view shows verbatim. */
  message: string;
}

/** Host -> view, the answer to one request. */
export interface ResponseMessage<R = unknown> {
  kind: "response";
  /** The `id` of the request being answered. */
  id: number;
  /** Present on success. */
  result?: R;
  /** Present on failure; `result` is then absent. */
  error?: ResponseError;
}

/** Host -> view, unsolicited. */
export interface NotificationMessage<M extends string = string, P = unknown> {
  kind: "notification";
  /** Scoped name, e.g. `jobDetail/state/didChange`. */
  method: M;
  /** Method-specific payload. */
  params: P;
}

export type ViewToHostMessage = CommandMessage | RequestMessage;
export type HostToViewMessage = ResponseMessage | NotificationMessage;

/** Command sent once the view has subscribed to messages; the host then sends the initial state. */
export const READY_COMMAND = "webview/ready";
export type ReadyCommand = CommandMessage<typeof READY_COMMAND, Record<string, never>>;

/** How long a view waits for a response before rejecting with status 0, code `timeout`. */
export const REQUEST_TIMEOUT_MS = 30_000;

/** An `api/*` request's params: the route's path parameters, and its body as `body` (`{ id }`, `{ id, body: patch }`). */
export type ApiParams<R extends AnyRoute> = ParamsOf<R> & (R["body"] extends TSchema ? { body: Static<R["body"]> } : unknown);
/** An `api/*` response's result: the route's answer, null for 204. */
export type ApiResult<R extends AnyRoute> = R["response"] extends TSchema ? Static<R["response"]> : null;

/**
 * Requests that map one-to-one onto the studio API (`/api/*`, one per route of sdk/api/studio.ts,
 * named `api/<its key>`); the host answers them with the same HTTP client the SPA uses.
 */
export type ApiRequests = { [K in keyof StudioApi & string as `api/${K}`]: { params: ApiParams<StudioApi[K]>; result: ApiResult<StudioApi[K]> } } & {
  /** Clipboard writes go through `vscode.env.clipboard`: the webview's own clipboard may be blocked. */
  "host/copyText": { params: { text: string }; result: null };
  /**
   * A webview cannot download: the host asks where to save (a save dialog) and writes the file.
   * `path` is where it went, null when the user dismissed the dialog.
   */
  "host/saveFile": { params: SaveFileRequest; result: { path: string | null } };
  /**
   * Saves what a download route of the studio answers (an adapter): the host opens it, asks where with the name the
   * studio gives, and streams the bytes into the file, so they never cross the webview. `path` null: dismissed.
   */
  "host/saveDownload": { params: DownloadRequest; result: { path: string | null } };
  /** Opens (or re-targets) the Playground panel: a job's adapter, alone or beside its base model (`compare`). */
  "host/openPlayground": { params: { jobId: string; compare: boolean }; result: null };
  /**
   * Opens one of the project's datasets in an editor at a 1-based line (a problem the Datasets panel lists).
   * `file` is as the trainer names it, relative to the project; the host refuses anything outside it.
   */
  "host/openDatasetLine": { params: { file: string; line: number }; result: null };
  /** Deletes a job behind VS Code's modal confirmation (the Delete Job command); `deleted` false: the user kept it. */
  "host/deleteJob": { params: { jobId: string }; result: { deleted: boolean } };
  /** Opens (or focuses) the Job detail panel of a job, e.g. from the Compare Jobs panel. */
  "host/openJob": { params: { jobId: string }; result: null };
  /** Opens a long-lived stream; its data arrives as `stream/*` notifications tagged with `streamId`. */
  "stream/open": { params: StreamSpec; result: { streamId: string } };
};
export type ApiMethod = keyof ApiRequests;
/** A panel's requests, each a method of `ApiRequests`: a name the contract lacks does not compile (Extract would drop it). */
export type PanelRequests<M extends ApiMethod> = M;

/** A call's parts as `api/*` params (path parameters flat, the body as `body`), and back. */
export function apiParams({ params, body }: CallParts): Record<string, unknown> {
  return body === undefined ? { ...params } : { ...params, body };
}
export function callParts({ body, ...params }: Record<string, unknown>): CallParts {
  return { params: params as Record<string, string>, body };
}

/** What a stream carries. */
export type StreamSpec =
  /**
   * `GET /api/jobs/:id/events`: data is a `JobStreamEvent`, or a `JobStreamEvent[]` for many
   * events at once (the history, sent in bulk); replayed from the first event.
   */
  | { kind: "jobEvents"; jobId: string }
  /** `POST /api/train`: data is a chunk of raw stdout+stderr text. */
  | { kind: "training" }
  /** `POST /api/inference/chat`: data is a text delta of the assistant's reply, and last its token counts as `{ usage }`. */
  | { kind: "chat"; request: ChatRequest };

/** The last data of a chat stream when the server reported the reply's token counts. */
export interface ChatUsageData {
  usage: ChatUsage;
}

/** What one `stream/didReceive` carries. */
export type StreamData = JobStreamEvent | JobStreamEvent[] | string | ChatUsageData;

/** Host -> view: one piece of stream data. */
export const STREAM_DATA = "stream/didReceive";
export interface StreamDataParams {
  /** From the `stream/open` response. */
  streamId: string;
  /** `JobStreamEvent` (or an ordered array of them) for jobEvents streams, a text chunk for training and chat streams, a chat's usage last. */
  data: StreamData;
}

/** Host -> view: the stream broke and the host is retrying (job events only; the view shows a banner). */
export const STREAM_INTERRUPTED = "stream/didInterrupt";
export interface StreamInterruptedParams {
  /** From the `stream/open` response. */
  streamId: string;
}

/** Host -> view: the stream finished; no more notifications for this id. */
export const STREAM_END = "stream/didEnd";
export interface StreamEndParams {
  /** From the `stream/open` response. */
  streamId: string;
  /** Present when the stream ended because of a failure (e.g. 409 run already in flight). */
  error?: ResponseError;
}

/** View -> host: stop a stream early (panel closed, user pressed Stop). */
export const STREAM_CLOSE_COMMAND = "stream/close";
export type StreamCloseCommand = CommandMessage<typeof STREAM_CLOSE_COMMAND, { streamId: string }>;
