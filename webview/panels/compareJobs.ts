/** Entry point of the VS Code Compare Jobs panel (contract: ui-shared/protocol/compareJobs.ts). */
import CompareJobsPanel from "./CompareJobsPanel.svelte";
import { startPanel } from "./startPanel.js";
import { COMPARE_JOBS_DID_CHANGE_STATE, type CompareJobsState } from "../../ui-shared/protocol/compareJobs.js";

startPanel(COMPARE_JOBS_DID_CHANGE_STATE, CompareJobsPanel, (state: CompareJobsState, transport) => ({ transport, jobIds: state.jobIds }));
