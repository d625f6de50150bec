/** The panels: which bundle, which state message, one panel per job / deployment, one Compare Jobs, Datasets and Playground panel. */
import { shortJobId } from "../../ui-shared/targetSummary.js";
import { ENDPOINT_DETAIL_DID_CHANGE_STATE, type EndpointDetailState } from "../../ui-shared/protocol/endpointDetail.js";
import { JOB_DETAIL_DID_CHANGE_STATE, type JobDetailState } from "../../ui-shared/protocol/jobDetail.js";
import { COMPARE_JOBS_DID_CHANGE_STATE, type CompareJobsState } from "../../ui-shared/protocol/compareJobs.js";
import { DATASETS_DID_CHANGE_STATE, type DatasetsState } from "../../ui-shared/protocol/datasets.js";
import { PLAYGROUND_DID_CHANGE_STATE, type PlaygroundState } from "../../ui-shared/protocol/playground.js";
import type { PanelKind } from "./detailPanels.js";

export const JOB_PANEL: PanelKind<JobDetailState> = {
  viewType: "svc.jobDetail",
  bundle: "jobDetail",
  stateMethod: JOB_DETAIL_DID_CHANGE_STATE,
  idOf: (state) => state.jobId,
  title: (state) => `Job: ${state.job?.name ?? shortJobId(state.jobId)}`,
  icon: "job",
};

export const ENDPOINT_PANEL: PanelKind<EndpointDetailState> = {
  viewType: "svc.endpointDetail",
  bundle: "endpointDetail",
  stateMethod: ENDPOINT_DETAIL_DID_CHANGE_STATE,
  idOf: (state) => state.deploymentId,
  title: (state) => `Endpoint: ${state.deployment?.slug ?? shortJobId(state.deploymentId)}`,
  icon: "endpoint",
};

/** One Compare Jobs panel: comparing other jobs replaces what it shows (its tab would otherwise multiply). */
export const COMPARE_PANEL: PanelKind<CompareJobsState> = {
  viewType: "svc.compareJobs",
  bundle: "compareJobs",
  stateMethod: COMPARE_JOBS_DID_CHANGE_STATE,
  idOf: (state) => (Array.isArray(state.jobIds) && state.jobIds.length > 0 ? "compare" : ""),
  title: (state) => `Compare ${state.jobIds.length} jobs`,
  icon: "job",
};

/** One Datasets panel, for the project folder (a revived panel with no folder in its state is dropped). */
export const DATASETS_PANEL: PanelKind<DatasetsState> = {
  viewType: "svc.datasets",
  bundle: "datasets",
  stateMethod: DATASETS_DID_CHANGE_STATE,
  idOf: (state) => (typeof state.folder === "string" && state.folder !== "" ? "datasets" : ""),
  title: () => "Datasets",
  icon: "datasets",
};

/** One Playground panel: opening it on another job replaces what it shows, as the SPA's route does. */
export const PLAYGROUND_PANEL: PanelKind<PlaygroundState> = {
  viewType: "svc.playground",
  bundle: "playground",
  stateMethod: PLAYGROUND_DID_CHANGE_STATE,
  idOf: () => "playground",
  title: () => "Playground",
  icon: "playground",
};
