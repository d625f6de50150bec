/** Deployments: a slug serving an adapter, a checkpoint or a base model behind the edge. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { ProjectQuery } from "./accounts.js";
import { InferenceDevice } from "./inferenceDevice.js";
import { route } from "./route.js";

const TARGET_RULE = 'target.kind must be one of "adapter", "checkpoint", "base_model"';
const jobId = T.String({ minLength: 1, errorMessage: "target.jobId must be a job id" });
/**
 * `baseModel` on an adapter or checkpoint: a registered vLLM upstream (with a `loraDir`) that serves
 * the adapter, loaded there at run time; without it the adapter is served by llama.cpp on the job's base.
 */
const onBaseModel = { baseModel: T.Optional(T.String({ minLength: 1, errorMessage: "target.baseModel must name a registered vLLM upstream model" })) };
/** What a deployment (or a chat) answers with: told apart by `kind`, so a 400 names the field of the kind given. */
export const DeploymentTarget = T.Union(
  [
    T.Object({ kind: T.Literal("adapter"), jobId, ...onBaseModel }),
    T.Object({
      kind: T.Literal("checkpoint"),
      jobId,
      step: T.Integer({ minimum: 0, errorMessage: "target.step must be a non-negative integer" }),
      ...onBaseModel,
    }),
    T.Object({ kind: T.Literal("base_model"), name: T.String({ minLength: 1, errorMessage: "target.name must name a base model" }) }),
  ],
  { errorMessage: TARGET_RULE },
);
export type DeploymentTarget = Static<typeof DeploymentTarget>;

const AuthMode = T.Union([T.Literal("fixed_api_key"), T.Literal("none")], { errorMessage: 'authMode must be "fixed_api_key" or "none"' });
export type AuthMode = Static<typeof AuthMode>;
const CORS_RULE = 'corsOrigins must be null or a list of up to 20 origins such as "https://app.example.com" (scheme, host, optional port; no path), or "*"';
const SLUG_RULE = "slug must be 3-40 characters of a-z, 0-9 and '-', and must not start or end with '-'";
export const SLUG_PATTERN = "^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$";

/** What a create or an update may set. */
const settings = {
  authMode: T.Optional(AuthMode),
  enabled: T.Optional(T.Boolean({ errorMessage: "enabled must be a boolean" })),
  runRetentionMode: T.Optional(T.String({ minLength: 1, maxLength: 40 })),
  runRetentionDays: T.Optional(T.Integer({ minimum: 0, maximum: 3650, errorMessage: "runRetentionDays must be an integer from 0 to 3650" })),
  /** See Deployment.corsOrigins; null restores the edge's default. */
  corsOrigins: T.Optional(T.Union([T.Null(), T.Array(T.String({ pattern: "^(\\*|https?://[^/\\s]+)$" }), { maxItems: 20 })], { errorMessage: CORS_RULE })),
};
const CreateDeploymentBody = T.Object({
  projectId: T.Optional(T.String()),
  slug: T.String({ pattern: SLUG_PATTERN, errorMessage: SLUG_RULE }),
  target: DeploymentTarget,
  ...settings,
});
export type CreateDeploymentInput = Omit<Static<typeof CreateDeploymentBody>, "projectId">;
const UpdateDeploymentBody = T.Object({ target: T.Optional(DeploymentTarget), ...settings });
export type UpdateDeploymentInput = Static<typeof UpdateDeploymentBody>;

const nullableString = T.Union([T.String(), T.Null()]);
/** An adapter loaded into a vLLM upstream at run time: its name there, its folder as vLLM reads it, and how its last load went. */
export const UpstreamAdapter = T.Object({
  name: T.String(),
  path: T.String(),
  /** "loaded"; "failed" (error says why: vLLM unreachable, the load refused); "not_loaded" before any try on this cloud instance. */
  state: T.Union([T.Literal("loaded"), T.Literal("failed"), T.Literal("not_loaded")]),
  error: nullableString,
});
export type UpstreamAdapter = Static<typeof UpstreamAdapter>;
export const Deployment = T.Object({
  id: T.String(),
  projectId: T.String(),
  slug: T.String(),
  target: DeploymentTarget,
  authMode: AuthMode,
  enabled: T.Boolean(),
  /** Reserved for a future feature; always null today. */
  customDomain: nullableString,
  runRetentionMode: T.String(),
  runRetentionDays: T.Integer(),
  /** Browser origins allowed to call the endpoint (CORS), e.g. `["https://app.example.com"]`; null: the edge's default (any origin unless SVC_EDGE_CORS_ORIGINS narrows it). */
  corsOrigins: T.Union([T.Array(T.String()), T.Null()]),
  /** Public edge URL `http://<slug>.<deploy_domain>` (base URL for SDKs is this plus `/v1`). */
  url: T.String(),
  /** Local alternative for clients that cannot resolve `*.localhost`: `http://127.0.0.1:E/d/<slug>`. */
  localUrl: T.String(),
  createdAt: T.String(),
  /**
   * What answers it, given by the detail route only (the endpoint page): llama.cpp on its device (null until the
   * inference child has loaded it), or the registered upstream server its base model names.
   */
  servedOn: T.Optional(
    T.Union([
      T.Object({ engine: T.Literal("llama.cpp"), device: T.Union([InferenceDevice, T.Null()]) }),
      T.Object({ engine: T.Literal("upstream"), url: T.String(), adapter: T.Optional(UpstreamAdapter) }),
    ]),
  ),
});
export type Deployment = Static<typeof Deployment>;
export type ServedOn = NonNullable<Deployment["servedOn"]>;

const scoped = { query: ProjectQuery, project: "query?", args: (id: string) => ({ params: { id } }) } as const;

export const deploymentsApi = {
  listDeployments: route({ method: "GET", path: "/v1/deployments", query: ProjectQuery, project: "query", response: T.Array(Deployment) }),
  getDeployment: route({ method: "GET", path: "/v1/deployments/:id", ...scoped, response: Deployment }),
  createDeployment: route({
    method: "POST",
    path: "/v1/deployments",
    query: ProjectQuery,
    body: CreateDeploymentBody,
    project: "body",
    args: (input: CreateDeploymentInput) => ({ body: input }),
    response: Deployment,
    status: 201,
  }),
  /** Partial update: only the given fields change (including `target`). */
  updateDeployment: route({
    method: "PATCH",
    path: "/v1/deployments/:id",
    ...scoped,
    body: UpdateDeploymentBody,
    args: (id: string, patch: UpdateDeploymentInput) => ({ params: { id }, body: patch }),
    response: Deployment,
  }),
  /** The slug stays reserved: a deleted deployment's URL never serves someone else's model. */
  deleteDeployment: route({ method: "DELETE", path: "/v1/deployments/:id", ...scoped, status: 204 }),
};
