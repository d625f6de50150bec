/** The two detail panels: which bundle, which state message, one panel per job / deployment. */
import { shortJobId } from "../../ui-shared/targetSummary.js";
import { ENDPOINT_DETAIL_DID_CHANGE_STATE, type EndpointDetailState } from "../../ui-shared/protocol/endpointDetail.js";
import { JOB_DETAIL_DID_CHANGE_STATE, type JobDetailState } from "../../ui-shared/protocol/jobDetail.js";
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
