/**
 * Contract of the Endpoint detail panel (VS Code) — the same component as the SPA's
 * `#/endpoints/:id`. Shared envelope and API requests: `common.ts`.
 *
 * Sequence: view sends `webview/ready` -> host sends `endpointDetail/state/didChange` -> the view
 * loads the deployment and its keys with `api/getDeployment` and `api/listKeys`; toggles and key
 * actions are `api/updateDeployment`, `api/issueKey`, `api/revokeKey`. When the host changes the
 * deployment elsewhere (tree context menu), it sends `endpointDetail/deployment/didChange`.
 */
import type { Deployment } from "../../sdk/wire.js";
import type { NotificationMessage, PanelRequests, ReadyCommand, RequestMessage } from "./common.js";

/** Initial (and replacement) state of the panel. */
export interface EndpointDetailState {
  /** The deployment to show. */
  deploymentId: string;
  /** The deployment as the host last saw it, so the header renders before `api/getDeployment` answers. */
  deployment?: Deployment;
}

/** Host -> view: show this deployment (after `ready`, and when the panel is reused). */
export const ENDPOINT_DETAIL_DID_CHANGE_STATE = "endpointDetail/state/didChange";
export type EndpointDetailDidChangeState = NotificationMessage<typeof ENDPOINT_DETAIL_DID_CHANGE_STATE, EndpointDetailState>;

/** Host -> view: the deployment or its keys changed outside the panel (e.g. a tree command); reload. */
export const ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT = "endpointDetail/deployment/didChange";
export type EndpointDetailDidChangeDeployment = NotificationMessage<typeof ENDPOINT_DETAIL_DID_CHANGE_DEPLOYMENT, { deploymentId: string }>;

/** API requests this panel sends. */
export type EndpointDetailRequestMethod = PanelRequests<
  | "api/getDeployment"
  | "api/updateDeployment"
  | "api/deleteDeployment"
  | "api/listKeys"
  | "api/issueKey"
  | "api/revokeKey"
  | "api/keyUsage"
  | "api/usageReport"
  | "api/updateKey"
  | "api/rotateKey"
  | "api/listArtifacts"
  | "host/copyText"
  | "host/saveDownload"
>;

export type EndpointDetailViewToHost = ReadyCommand | RequestMessage<EndpointDetailRequestMethod>;
export type EndpointDetailHostToView = EndpointDetailDidChangeState | EndpointDetailDidChangeDeployment;
