/** Entry point of the VS Code Compare Jobs panel (contract: ui-shared/protocol/compareJobs.ts). */
import { mount, unmount } from "svelte";
import "../app/elements.js";
import "../styles/theme.css";
import "../styles/base.css";
import CompareJobsPanel from "./CompareJobsPanel.svelte";
import { getVsCodeApi, VsCodeTransport } from "../transport/vscode.js";
import { COMPARE_JOBS_DID_CHANGE_STATE, type CompareJobsState } from "../../ui-shared/protocol/compareJobs.js";

const transport = new VsCodeTransport();
const target = document.getElementById("app") ?? document.body;
let current: ReturnType<typeof mount> | undefined;

transport.onNotification<CompareJobsState>(COMPARE_JOBS_DID_CHANGE_STATE, (state) => {
  if (current) void unmount(current);
  current = mount(CompareJobsPanel, { target, props: { transport, jobIds: state.jobIds } });
  // Kept so the host's serializer can revive the panel on the same jobs after a reload.
  getVsCodeApi().setState(state);
});
transport.ready();
