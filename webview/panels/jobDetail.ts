/** Entry point of the VS Code Job detail panel (contract: ui-shared/protocol/jobDetail.ts). */
import { mount, unmount } from "svelte";
import "../app/elements.js";
import "../styles/theme.css";
import "../styles/base.css";
import JobDetailPanel from "./JobDetailPanel.svelte";
import { getVsCodeApi, VsCodeTransport } from "../transport/vscode.js";
import { JOB_DETAIL_DID_CHANGE_STATE, type JobDetailState } from "../../ui-shared/protocol/jobDetail.js";

const transport = new VsCodeTransport();
const target = document.getElementById("app") ?? document.body;
let current: ReturnType<typeof mount> | undefined;

transport.onNotification<JobDetailState>(JOB_DETAIL_DID_CHANGE_STATE, (state) => {
  if (current) void unmount(current);
  current = mount(JobDetailPanel, { target, props: { transport, jobId: state.jobId, initialJob: state.job } });
  // Kept so the host's serializer can revive the panel on the same job after a reload.
  getVsCodeApi().setState(state);
});
transport.ready();
