/** A deployment's API keys: the plaintext leaves the cloud once, in the answer that creates it. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { KEY_LABEL_MAX } from "../keyLabel.js";
import { ProjectQuery } from "./accounts.js";
import { route } from "./route.js";

export const KEY_LABEL_RULE = `label must be 1 to ${KEY_LABEL_MAX} characters`;

export const DeploymentKey = T.Object({
  id: T.String(), deploymentId: T.String(), label: T.String(),
  /** First 12 characters of the plaintext, safe to display. */
  prefix: T.String(),
  enabled: T.Boolean(), lastUsedAt: T.Union([T.String(), T.Null()]), createdAt: T.String(),
});
export type DeploymentKey = Static<typeof DeploymentKey>;
/** Returned once, by key creation only: the only time the plaintext leaves the cloud. */
export const CreatedDeploymentKey = T.Object({ ...DeploymentKey.properties, key: T.String() });
export type CreatedDeploymentKey = Static<typeof CreatedDeploymentKey>;

/** The length is checked by the shared rule (sdk/keyLabel.ts: code points, trimmed) in the route. */
export const CreateKeyBody = T.Object({ label: T.String({ errorMessage: KEY_LABEL_RULE }) });

const scoped = { query: ProjectQuery, project: "query?" } as const;

export const keysApi = {
  listDeploymentKeys: route({ method: "GET", path: "/v1/deployments/:id/keys", ...scoped, args: (deploymentId: string) => ({ params: { id: deploymentId } }), response: T.Array(DeploymentKey) }),
  /** The response's `key` is the plaintext: shown once, never returned again. */
  createDeploymentKey: route({ method: "POST", path: "/v1/deployments/:id/keys", ...scoped, body: CreateKeyBody, response: CreatedDeploymentKey, status: 201,
    args: (deploymentId: string, input: { label: string }) => ({ params: { id: deploymentId }, body: input }) }),
  revokeDeploymentKey: route({ method: "DELETE", path: "/v1/deployments/:id/keys/:keyId", ...scoped, args: (deploymentId: string, keyId: string) => ({ params: { id: deploymentId, keyId } }), status: 204 }),
};
