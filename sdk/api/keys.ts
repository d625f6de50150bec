/** A deployment's API keys: the plaintext leaves the cloud once, in the answer that creates it. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { KEY_LABEL_MAX } from "../keyLabel.js";
import { ProjectQuery } from "./accounts.js";
import { route } from "./route.js";

export const KEY_LABEL_RULE = `label must be 1 to ${KEY_LABEL_MAX} characters`;

const Nullable = <S extends import("@sinclair/typebox").TSchema>(schema: S) => T.Union([schema, T.Null()]);

export const BUDGET_PERIODS = ["total", "day", "month"] as const;
export const LIMITS_RULE = "limits.requestsPerMinute and limits.tokensPerMinute must be whole numbers from 1, or null";
export const BUDGET_RULE = 'budget must be { tokens: a whole number from 1, period: "total" | "day" | "month" }, or null';
export const EXPIRES_AT_RULE = "expiresAt must be an ISO 8601 date-time, or null";

/** Per-minute limits of a key; null: no limit of that kind. */
export const KeyLimits = T.Object(
  {
    requestsPerMinute: Nullable(T.Integer({ minimum: 1, errorMessage: LIMITS_RULE })),
    tokensPerMinute: Nullable(T.Integer({ minimum: 1, errorMessage: LIMITS_RULE })),
  },
  { errorMessage: LIMITS_RULE },
);
export type KeyLimits = Static<typeof KeyLimits>;
/** A token budget over the key's life ("total") or per UTC day or month. */
export const KeyBudget = T.Object(
  {
    tokens: T.Integer({ minimum: 1, errorMessage: BUDGET_RULE }),
    period: T.Union(
      BUDGET_PERIODS.map((p) => T.Literal(p)),
      { errorMessage: BUDGET_RULE },
    ),
  },
  { errorMessage: BUDGET_RULE },
);
export type KeyBudget = Static<typeof KeyBudget>;

/** What a key has used: in all, in its current minute window and in its budget's current period. */
export const KeyUsage = T.Object({
  requests: T.Number(),
  promptTokens: T.Number(),
  completionTokens: T.Number(),
  /** Requests and tokens of the current minute window (what the limits count). */
  minuteRequests: T.Number(),
  minuteTokens: T.Number(),
  /** Tokens spent in the budget's current period (held by requests in flight not included). */
  budgetTokens: T.Number(),
});
export type KeyUsage = Static<typeof KeyUsage>;

export const DeploymentKey = T.Object({
  id: T.String(),
  deploymentId: T.String(),
  label: T.String(),
  /** First 12 characters of the plaintext, safe to display. */
  prefix: T.String(),
  enabled: T.Boolean(),
  lastUsedAt: T.Union([T.String(), T.Null()]),
  createdAt: T.String(),
  expiresAt: Nullable(T.String()),
  limits: KeyLimits,
  budget: Nullable(KeyBudget),
  /** Id of the key that replaced this one by rotation; null when not rotated. */
  rotatedTo: Nullable(T.String()),
  usage: KeyUsage,
});
export type DeploymentKey = Static<typeof DeploymentKey>;
/** Returned once, by key creation only: the only time the plaintext leaves the cloud. */
export const CreatedDeploymentKey = T.Object({ ...DeploymentKey.properties, key: T.String() });
export type CreatedDeploymentKey = Static<typeof CreatedDeploymentKey>;

/** The length is checked by the shared rule (sdk/keyLabel.ts: code points, trimmed) in the route. */
export const KeyRules = T.Object({
  expiresAt: T.Optional(Nullable(T.String({ errorMessage: EXPIRES_AT_RULE }))),
  limits: T.Optional(
    Nullable(
      T.Object(
        {
          requestsPerMinute: T.Optional(Nullable(T.Integer({ minimum: 1, errorMessage: LIMITS_RULE }))),
          tokensPerMinute: T.Optional(Nullable(T.Integer({ minimum: 1, errorMessage: LIMITS_RULE }))),
        },
        { additionalProperties: false, errorMessage: LIMITS_RULE },
      ),
    ),
  ),
  budget: T.Optional(Nullable(KeyBudget)),
});
export type KeyRules = Static<typeof KeyRules>;
export const CreateKeyBody = T.Object({ label: T.String({ errorMessage: KEY_LABEL_RULE }), ...KeyRules.properties });
export type CreateKeyInput = Static<typeof CreateKeyBody>;
/** Only the rules named change; null removes one. */
export const UpdateKeyBody = T.Object({ label: T.Optional(T.String({ errorMessage: KEY_LABEL_RULE })), ...KeyRules.properties });
export type UpdateKeyInput = Static<typeof UpdateKeyBody>;
export const GRACE_RULE = "graceSeconds must be a whole number from 0 to 2592000 (30 days)";
export const RotateKeyBody = T.Object({ graceSeconds: T.Integer({ minimum: 0, maximum: 2_592_000, errorMessage: GRACE_RULE }) });

/** Usage of a deployment per key and minute over the last day, oldest first. */
export const UsageRow = T.Object({
  keyId: T.String(),
  keyPrefix: T.String(),
  minute: T.String(),
  requests: T.Number(),
  errors: T.Number(),
  promptTokens: T.Number(),
  completionTokens: T.Number(),
});
export type UsageRow = Static<typeof UsageRow>;

export const USAGE_RANGES = ["hour", "day", "month"] as const;
export type UsageRange = (typeof USAGE_RANGES)[number];
export const USAGE_RANGE_RULE = 'range must be "hour", "day" or "month"';
export const USAGE_FORMAT_RULE = 'format must be "csv" or "json"';

/** Time percentiles of a bucket in milliseconds, read from a log-scale histogram (within 5% of the exact value). */
export const Percentiles = T.Object({ p50: T.Number(), p95: T.Number() });
export type Percentiles = Static<typeof Percentiles>;

/**
 * One bucket of a usage report: one key's (keyId set) or the whole deployment's (keyId null, every key summed).
 * `errorsByStatus` counts the answers of status 400 and up by status ("429": 3); latency is to the answer's last
 * byte, time to first token to its first generated text (null when no answer in the bucket generated any).
 */
export const UsageBucket = T.Object({
  start: T.String(),
  keyId: Nullable(T.String()),
  keyPrefix: Nullable(T.String()),
  requests: T.Number(),
  errors: T.Number(),
  errorsByStatus: T.Record(T.String(), T.Number()),
  promptTokens: T.Number(),
  completionTokens: T.Number(),
  latencyMs: Nullable(Percentiles),
  timeToFirstTokenMs: Nullable(Percentiles),
});
export type UsageBucket = Static<typeof UsageBucket>;

/**
 * Usage of a deployment over the last hour (1-minute buckets), day (15-minute buckets) or month (30 UTC days, daily
 * buckets): only buckets with requests are listed, oldest first; `from` is the first bucket's start, `to` the end of
 * the last one. Requests made without a key (an endpoint open to all) are not counted.
 */
export const UsageReport = T.Object({
  range: T.Union(USAGE_RANGES.map((r) => T.Literal(r))),
  bucketSeconds: T.Integer(),
  from: T.String(),
  to: T.String(),
  rows: T.Array(UsageBucket),
  /** The whole range as one bucket (start: `from`), the deployment's first, then each key's that has requests. */
  totals: T.Array(UsageBucket),
});
export type UsageReport = Static<typeof UsageReport>;
export const UsageExportQuery = T.Object({
  projectId: T.Optional(T.String()),
  format: T.Optional(T.Union([T.Literal("csv"), T.Literal("json")], { errorMessage: USAGE_FORMAT_RULE })),
});

const scoped = { query: ProjectQuery, project: "query?" } as const;

export const keysApi = {
  listDeploymentKeys: route({
    method: "GET",
    path: "/v1/deployments/:id/keys",
    ...scoped,
    args: (deploymentId: string) => ({ params: { id: deploymentId } }),
    response: T.Array(DeploymentKey),
  }),
  /** The response's `key` is the plaintext: shown once, never returned again. */
  createDeploymentKey: route({
    method: "POST",
    path: "/v1/deployments/:id/keys",
    ...scoped,
    body: CreateKeyBody,
    response: CreatedDeploymentKey,
    status: 201,
    args: (deploymentId: string, input: CreateKeyInput) => ({ params: { id: deploymentId }, body: input }),
  }),
  updateDeploymentKey: route({
    method: "PATCH",
    path: "/v1/deployments/:id/keys/:keyId",
    ...scoped,
    body: UpdateKeyBody,
    response: DeploymentKey,
    args: (deploymentId: string, keyId: string, patch: UpdateKeyInput) => ({ params: { id: deploymentId, keyId }, body: patch }),
  }),
  /** A new key with the same label and rules; the old one keeps working `graceSeconds`, then is refused as expired. */
  rotateDeploymentKey: route({
    method: "POST",
    path: "/v1/deployments/:id/keys/:keyId/rotate",
    ...scoped,
    body: RotateKeyBody,
    response: CreatedDeploymentKey,
    status: 201,
    args: (deploymentId: string, keyId: string, graceSeconds: number) => ({ params: { id: deploymentId, keyId }, body: { graceSeconds } }),
  }),
  getDeploymentUsage: route({
    method: "GET",
    path: "/v1/deployments/:id/usage",
    ...scoped,
    response: T.Array(UsageRow),
    args: (deploymentId: string) => ({ params: { id: deploymentId } }),
  }),
  /** Usage per key and per deployment over a range, bucketed (UsageReport). */
  getDeploymentUsageReport: route({
    method: "GET",
    path: "/v1/deployments/:id/usage/:range",
    ...scoped,
    response: UsageReport,
    args: (deploymentId: string, range: UsageRange) => ({ params: { id: deploymentId, range } }),
  }),
  revokeDeploymentKey: route({
    method: "DELETE",
    path: "/v1/deployments/:id/keys/:keyId",
    ...scoped,
    args: (deploymentId: string, keyId: string) => ({ params: { id: deploymentId, keyId } }),
    status: 204,
  }),
};

/** The usage report as a file to save: CSV (one line per bucket, the deployment's lines with empty key cells) or JSON. */
export const usageExportRoute = route({
  method: "GET",
  path: "/v1/deployments/:id/usage/:range/export",
  ...scoped,
  query: UsageExportQuery,
  produces: "file",
});
