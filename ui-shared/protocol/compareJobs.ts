/**
 * Contract of the Compare Jobs panel (VS Code) — the same component as the SPA's
 * `#/compare?ids=a,b`. Shared envelope, API requests and stream messages: `common.ts`.
 *
 * Sequence: view sends `webview/ready` -> host sends `compareJobs/state/didChange` with the jobs
 * to compare -> the view loads each job (`api/getJob`) and opens each one's event stream
 * (`stream/open` `{kind:"jobEvents"}`); a job name opens its Job detail panel (`host/openJob`).
 * There is one Compare Jobs panel: comparing other jobs replaces its state.
 */
import type { NotificationMessage, PanelRequests, ReadyCommand, RequestMessage, StreamCloseCommand } from "./common.js";

/** Initial (and replacement) state of the panel. */
export interface CompareJobsState {
  /** 2 to 5 job ids, in the order the user picked them (which sets their colours). */
  jobIds: string[];
}

/** Host -> view: compare these jobs (after `ready`, and again when the panel is reused). */
export const COMPARE_JOBS_DID_CHANGE_STATE = "compareJobs/state/didChange";
export type CompareJobsDidChangeState = NotificationMessage<typeof COMPARE_JOBS_DID_CHANGE_STATE, CompareJobsState>;

/** API requests this panel sends (answered as described in `common.ts`). */
export type CompareJobsRequestMethod = PanelRequests<"api/getJob" | "stream/open" | "host/openJob">;

export type CompareJobsViewToHost = ReadyCommand | RequestMessage<CompareJobsRequestMethod> | StreamCloseCommand;
export type CompareJobsHostToView = CompareJobsDidChangeState;
