/** The panels: which bundle, which state message, one panel per job / deployment, one Compare Jobs panel. */
import { shortJobId } from "../../ui-shared/targetSummary.js";
import { ENDPOINT_DETAIL_DID_CHANGE_STATE, type EndpointDetailState } from "../../ui-shared/protocol/endpointDetail.js";
import { JOB_DETAIL_DID_CHANGE_STATE, type JobDetailState } from "../../ui-shared/protocol/jobDetail.js";
import { COMPARE_JOBS_DID_CHANGE_STATE, type CompareJobsState } from "../../ui-shared/protocol/compareJobs.js";
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
