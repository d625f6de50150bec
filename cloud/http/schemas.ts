/**
 * TypeBox schemas of the control plane's request bodies. `errorMessage` replaces ajv's generic
 * text with a sentence that names the field, so a 400 tells the user what to fix.
 */
import { Type, type Static } from "@sinclair/typebox";
import { KEY_LABEL_MAX } from "../../sdk/keyLabel.js";

export const SLUG_RULE = "slug must be 3-40 characters of a-z, 0-9 and '-', and must not start or end with '-'";
export const SLUG_PATTERN = "^[a-z0-9](?:[a-z0-9-]{1,38})[a-z0-9]$";

export const Slug = Type.String({ pattern: SLUG_PATTERN, errorMessage: SLUG_RULE });
export const KEY_LABEL_RULE = `label must be 1 to ${KEY_LABEL_MAX} characters`;
/** Length is checked by the shared rule (sdk/keyLabel.ts: code points, trimmed) in the route. */
export const KeyLabel = Type.String({ errorMessage: KEY_LABEL_RULE });
export const AuthModeSchema = Type.Union([Type.Literal("fixed_api_key"), Type.Literal("none")], {
  errorMessage: 'authMode must be "fixed_api_key" or "none"',
});

/**
 * The target is checked by hand after the generic shape (see parseTarget) because ajv's messages
 * for a failed union are unreadable.
 */
export const TargetShape = Type.Object({}, { additionalProperties: true, errorMessage: "target must be an object" });

const CORS_RULE = 'corsOrigins must be null or a list of up to 20 origins such as "https://app.example.com" (scheme, host, optional port; no path), or "*"';
export const CorsOrigins = Type.Union(
  [Type.Null(), Type.Array(Type.String({ pattern: "^(\\*|https?://[^/\\s]+)$" }), { maxItems: 20 })],
  { errorMessage: CORS_RULE },
);

export const CreateDeploymentBody = Type.Object({
  projectId: Type.Optional(Type.String()),
  slug: Slug,
  target: TargetShape,
  authMode: Type.Optional(AuthModeSchema),
  enabled: Type.Optional(Type.Boolean({ errorMessage: "enabled must be a boolean" })),
  runRetentionMode: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  runRetentionDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650, errorMessage: "runRetentionDays must be an integer from 0 to 3650" })),
  corsOrigins: Type.Optional(CorsOrigins),
});
export type CreateDeploymentBody = Static<typeof CreateDeploymentBody>;

export const UpdateDeploymentBody = Type.Object({
  target: Type.Optional(TargetShape),
  authMode: Type.Optional(AuthModeSchema),
  enabled: Type.Optional(Type.Boolean({ errorMessage: "enabled must be a boolean" })),
  runRetentionMode: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
  runRetentionDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 3650, errorMessage: "runRetentionDays must be an integer from 0 to 3650" })),
  corsOrigins: Type.Optional(CorsOrigins),
});
export type UpdateDeploymentBody = Static<typeof UpdateDeploymentBody>;

export const CreateKeyBody = Type.Object({ label: KeyLabel });

export const CreateProjectBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 80, errorMessage: "name must be 1 to 80 characters" }),
  orgId: Type.Optional(Type.String()),
});

export const CreateJobBody = Type.Object({
  projectId: Type.String({ errorMessage: "projectId is required" }),
  name: Type.String({ minLength: 1, maxLength: 120, errorMessage: "name must be 1 to 120 characters" }),
  config: Type.Record(Type.String(), Type.Unknown(), { errorMessage: "config must be an object" }),
  datasetId: Type.Optional(Type.String()),
  evalDatasetId: Type.Optional(Type.String()),
});
export type CreateJobBody = Static<typeof CreateJobBody>;

export const ProjectQuery = Type.Object({ projectId: Type.Optional(Type.String()) });
export const IdParams = Type.Object({ id: Type.String() });
export const KeyParams = Type.Object({ id: Type.String(), keyId: Type.String() });
