/**
 * Contract of the Datasets panel (VS Code) — the same component as the SPA's `#/datasets`.
 * Shared envelope and API requests: `common.ts`.
 *
 * Sequence: view sends `webview/ready` -> host sends `datasets/state/didChange` -> the view asks
 * for the preview (`api/getDatasetPreview`, which runs `svc start --dry-run --preview` in the
 * project); a problem's line number opens the dataset at that line (`host/openDatasetLine`).
 * There is one Datasets panel: running "Preview Datasets" again re-sends the state, and the view
 * reads the files again.
 */
import type { NotificationMessage, PanelRequests, ReadyCommand, RequestMessage } from "./common.js";

/** Initial (and replacement) state of the panel. */
export interface DatasetsState {
  /** The project folder whose datasets the panel shows; a reload revives the panel only when it is set. */
  folder: string;
}

/** Host -> view: show the datasets (after `ready`, and again when "Preview Datasets" runs with the panel open). */
export const DATASETS_DID_CHANGE_STATE = "datasets/state/didChange";
export type DatasetsDidChangeState = NotificationMessage<typeof DATASETS_DID_CHANGE_STATE, DatasetsState>;

/** API requests this panel sends (answered as described in `common.ts`). */
export type DatasetsRequestMethod = PanelRequests<"api/getDatasetPreview" | "host/openDatasetLine">;

export type DatasetsViewToHost = ReadyCommand | RequestMessage<DatasetsRequestMethod>;
export type DatasetsHostToView = DatasetsDidChangeState;
