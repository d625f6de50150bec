/** Entry point of the VS Code Endpoint detail panel (contract: ui-shared/protocol/endpointDetail.ts). */
import { mount, unmount } from "svelte";
import "../app/elements.js";
import "../styles/theme.css";
import "../styles/base.css";
import EndpointDetailPanel from "./EndpointDetailPanel.svelte";
import { getVsCodeApi, VsCodeTransport } from "../transport/vscode.js";
import {
  ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT,
  ENDPOINT_DETAIL_DID_CHANGE_STATE,
  type EndpointDetailState,
} from "../../ui-shared/protocol/endpointDetail.js";

const transport = new VsCodeTransport();
const target = document.getElementById("app") ?? document.body;
let current: { reload(): void } | undefined;
let currentId: string | undefined;

transport.onNotification<EndpointDetailState>(ENDPOINT_DETAIL_DID_CHANGE_STATE, (state) => {
  if (current) void unmount(current);
  currentId = state.deploymentId;
  current = mount(EndpointDetailPanel, {
    target,
    props: { transport, deploymentId: state.deploymentId, initialDeployment: state.deployment },
  }) as { reload(): void };
  // Kept so the host's serializer can revive the panel on the same deployment after a reload.
  getVsCodeApi().setState(state);
});
transport.onNotification<{ deploymentId: string }>(ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT, ({ deploymentId }) => {
  if (deploymentId === currentId) current?.reload();
});
transport.ready();
