/**
 * Contract of the Playground panel (VS Code) — the same component as the SPA's `#/playground`.
 * Shared envelope, API requests and stream messages: `common.ts`.
 *
 * Sequence: view sends `webview/ready` -> host sends `playground/state/didChange` -> the view lists
 * the targets (`api/listJobs`, `api/listModels`, `api/listArtifacts`) and streams each reply
 * through `stream/open` `{kind:"chat"}` (side by side: two streams at once), the reply's token
 * counts last. There is one Playground panel: opening it for another job replaces its state.
 */
import type { NotificationMessage, PanelRequests, ReadyCommand, RequestMessage, StreamCloseCommand } from "./common.js";

/** Initial (and replacement) state of the panel. */
export interface PlaygroundState {
  /** A completed job whose adapter the first picker chooses; absent: the picker's own first choice. */
  jobId?: string;
  /** With `jobId`: side by side, the job's base model beside its adapter (the Job panel's "Compare with base model"). */
  compare?: boolean;
}

/** Host -> view: show the Playground (after `ready`, and again when it is opened for another job). */
export const PLAYGROUND_DID_CHANGE_STATE = "playground/state/didChange";
export type PlaygroundDidChangeState = NotificationMessage<typeof PLAYGROUND_DID_CHANGE_STATE, PlaygroundState>;

/** API requests this panel sends (answered as described in `common.ts`). */
export type PlaygroundRequestMethod = PanelRequests<"api/getJob" | "api/listJobs" | "api/listModels" | "api/listArtifacts" | "stream/open">;

export type PlaygroundViewToHost = ReadyCommand | RequestMessage<PlaygroundRequestMethod> | StreamCloseCommand;
export type PlaygroundHostToView = PlaygroundDidChangeState;
