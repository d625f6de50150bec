/**
 * Contract of the Job detail panel (VS Code) — the same component as the SPA's `#/jobs/:id`.
 * Shared envelope, API requests and stream messages: `common.ts`.
 *
 * Sequence: view sends `webview/ready` -> host sends `jobDetail/state/didChange` with the job to
 * show -> the view loads the job and opens its event stream through `stream/open`
 * `{kind:"jobEvents"}`; events arrive as `stream/didReceive`, breaks as `stream/didInterrupt`,
 * the server's `end` as `stream/didEnd`.
 */
import type { Job } from "../../sdk/wire.js";
import type { NotificationMessage, PanelRequests, ReadyCommand, RequestMessage, StreamCloseCommand } from "./common.js";

/** Initial (and replacement) state of the panel. */
export interface JobDetailState {
  /** The job to show; the panel title also carries it. */
  jobId: string;
  /** The job as the host last saw it (from the Jobs tree), so the header renders before `api/getJob` answers. */
  job?: Job;
}

/** Host -> view: show this job (sent after `ready`, and again when the panel is reused for another job). */
export const JOB_DETAIL_DID_CHANGE_STATE = "jobDetail/state/didChange";
export type JobDetailDidChangeState = NotificationMessage<typeof JOB_DETAIL_DID_CHANGE_STATE, JobDetailState>;

/** API requests this panel sends (answered as described in `common.ts`). */
export type JobDetailRequestMethod = PanelRequests<
  | "api/getJob"
  | "api/cancelJob"
  | "api/listArtifacts"
  | "api/listJobSamples"
  | "api/listModels"
  | "api/getExportProgress"
  | "stream/open"
  | "host/saveFile"
  | "host/saveDownload"
  | "host/openPlayground"
  | "host/deleteJob"
>;

export type JobDetailViewToHost = ReadyCommand | RequestMessage<JobDetailRequestMethod> | StreamCloseCommand;
export type JobDetailHostToView = JobDetailDidChangeState;
