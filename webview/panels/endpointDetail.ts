/** Entry point of the VS Code Endpoint detail panel (contract: ui-shared/protocol/endpointDetail.ts). */
import EndpointDetailPanel from "./EndpointDetailPanel.svelte";
import { startPanel } from "./startPanel.js";
import { ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT, ENDPOINT_DETAIL_DID_CHANGE_STATE, type EndpointDetailState } from "../../ui-shared/protocol/endpointDetail.js";

const panel = startPanel(ENDPOINT_DETAIL_DID_CHANGE_STATE, EndpointDetailPanel, (state: EndpointDetailState, transport) => ({
  transport,
  deploymentId: state.deploymentId,
  initialDeployment: state.deployment,
}));
panel.transport.onNotification<{ deploymentId: string }>(ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT, ({ deploymentId }) => {
  const current = panel.current();
  if (current?.state.deploymentId === deploymentId) current.root.reload();
});
