/**
 * Deployments and their keys (SPEC section 4, DESIGN.md section 8): each request opens the session,
 * builds a client and calls the one matching SDK method; cloud errors keep status and message.
 * Scope semantics (SPEC section 2): the list is `[]` without any upstream call, not even minting
 * credentials, while `.svc/state.json` is absent; the first create makes the state (anonymous
 * credentials only, through ProjectSession).
 */
import { contentDisposition } from "../../sdk/api/files.js";
import { usageFileName, usageReportCsv } from "../../sdk/usageCsv.js";
import type { UsageRange } from "../../sdk/wire.js";
import type { StudioContext, StudioHandlers } from "../context.js";

type DeploymentRoutes =
  | "listDeployments"
  | "createDeployment"
  | "getDeployment"
  | "updateDeployment"
  | "deleteDeployment"
  | "listKeys"
  | "issueKey"
  | "revokeKey"
  | "keyUsage"
  | "usageReport"
  | "updateKey"
  | "downloadUsage"
  | "rotateKey";

export function deploymentHandlers({ sessions }: StudioContext): Pick<StudioHandlers, DeploymentRoutes> {
  return {
    listDeployments: async () => (await sessions.existingProjectClient())?.listDeployments() ?? [],
    createDeployment: async ({ body }) => (await (await sessions.open()).scopedClient()).createDeployment(body),
    getDeployment: async ({ params }) => (await sessions.clientFor()).getDeployment(params.id),
    updateDeployment: async ({ params, body }) => (await sessions.clientFor()).updateDeployment(params.id, body),
    deleteDeployment: async ({ params }) => (await sessions.clientFor()).deleteDeployment(params.id),
    listKeys: async ({ params }) => (await sessions.clientFor()).listDeploymentKeys(params.id),
    issueKey: async ({ params, body }, reply) => {
      // The response carries the plaintext key: never cached, shown once by the UI.
      reply.header("cache-control", "no-store");
      return (await sessions.clientFor()).createDeploymentKey(params.id, body);
    },
    revokeKey: async ({ params }) => (await sessions.clientFor()).revokeDeploymentKey(params.id, params.keyId),
    rotateKey: async ({ params, body }, reply) => {
      // The new key's plaintext: never cached, shown once by the UI.
      reply.header("cache-control", "no-store");
      return (await sessions.clientFor()).rotateDeploymentKey(params.id, params.keyId, body.graceSeconds);
    },
    keyUsage: async ({ params }) => (await sessions.clientFor()).getDeploymentUsage(params.id),
    usageReport: async ({ params }) => (await sessions.clientFor()).getDeploymentUsageReport(params.id, params.range as UsageRange),
    updateKey: async ({ params, body }) => (await sessions.clientFor()).updateDeploymentKey(params.id, params.keyId, body),
    /** Made here from the cloud's report, so the studio and the cloud's export write the same file. */
    downloadUsage: async ({ params, query }, reply) => {
      const client = await sessions.clientFor();
      const report = await client.getDeploymentUsageReport(params.id, params.range as UsageRange);
      const { slug } = await client.getDeployment(params.id);
      const format = query.format ?? "csv";
      void reply.header("content-disposition", contentDisposition(usageFileName(slug, report.range, format)));
      return format === "json"
        ? reply.type("application/json").send(JSON.stringify(report))
        : reply.type("text/csv; charset=utf-8").send(usageReportCsv(report));
    },
  };
}
