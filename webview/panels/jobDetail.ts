/** Entry point of the VS Code Job detail panel (contract: ui-shared/protocol/jobDetail.ts). */
import JobDetailPanel from "./JobDetailPanel.svelte";
import { startPanel } from "./startPanel.js";
import { JOB_DETAIL_DID_CHANGE_STATE, type JobDetailState } from "../../ui-shared/protocol/jobDetail.js";

startPanel(JOB_DETAIL_DID_CHANGE_STATE, JobDetailPanel, (state: JobDetailState, transport) => ({ transport, jobId: state.jobId, initialJob: state.job }));
