import type { FastifyInstance, FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import { createDeployment, deleteDeployment, listDeployments, requireDeployment, toDeployment, updateDeployment } from "../domain/deployments.js";
import { createKey, deploymentUsage, listKeys, revokeKey, rotateKey, ruleColumns, updateKey } from "../domain/deploymentKeys.js";
import { badRequest } from "../http/errors.js";
import { isValidKeyLabel, normalizeKeyLabel } from "../../sdk/keyLabel.js";
import { deploymentsApi, type ServedOn } from "../../sdk/api/deployments.js";
import type { DeploymentTarget } from "../../sdk/wire.js";
import { KEY_LABEL_RULE, keysApi, USAGE_RANGE_RULE, USAGE_RANGES, usageExportRoute, type UsageRange } from "../../sdk/api/keys.js";
import { contentDisposition } from "../../sdk/api/files.js";
import { usageFileName, usageReportCsv } from "../../sdk/usageCsv.js";
import { serveRoute, serveRoutes } from "../../server-shared/serveRoute.js";
import { usageReport } from "../domain/usageReport.js";
import { projectScope } from "./scope.js";

/** What the routes ask of inference: what answers a target, and adapters on vLLM to load or unload as deployments change. */
export interface DeploymentServing {
  servedOn(target: DeploymentTarget): Promise<ServedOn | undefined>;
  changed(before: DeploymentTarget | null, after: DeploymentTarget | null): Promise<void>;
}

const NO_SERVING: DeploymentServing = { servedOn: async () => undefined, changed: async () => undefined };

/** What a deployment row serves: its target while it is enabled, nothing otherwise. */
const servedTarget = (deployment: { enabled: boolean; target: DeploymentTarget }) => (deployment.enabled ? deployment.target : null);

export function deploymentRoutes(app: FastifyInstance, ctx: CloudContext, serving: DeploymentServing = NO_SERVING): void {
  /** The deployment `:id` names, in the request's project scope (404 outside it). */
  const deploymentOf = async (request: FastifyRequest<{ Params: { id: string }; Querystring: { projectId?: string } }>) =>
    requireDeployment(ctx, await projectScope(ctx, request, request.query.projectId), request.params.id);

  serveRoutes(app, deploymentsApi, {
    listDeployments: async (request) => {
      const [projectId] = await projectScope(ctx, request, requiredProjectId(request.query.projectId));
      return listDeployments(ctx, projectId);
    },
    createDeployment: async (request) => {
      const { body } = request;
      const [projectId] = await projectScope(ctx, request, requiredProjectId(body.projectId ?? request.query.projectId));
      const deployment = await createDeployment(ctx, projectId, body);
      ctx.deploymentChanges.changed(deployment.slug);
      // An adapter on vLLM is loaded before the answer (bounded by the upstream timeout); a failure is the adapter's state, not the create's.
      await serving.changed(null, servedTarget(deployment));
      return deployment;
    },
    getDeployment: async (request) => {
      const deployment = await toDeployment(ctx, await deploymentOf(request));
      const served = await serving.servedOn(deployment.target);
      return served ? { ...deployment, servedOn: served } : deployment;
    },
    updateDeployment: async (request) => {
      const row = await deploymentOf(request);
      const updated = await updateDeployment(ctx, row, request.body);
      ctx.deploymentChanges.changed(row.slug);
      await serving.changed(servedTarget(toDeployment(ctx, row)), servedTarget(updated));
      return updated;
    },
    deleteDeployment: async (request) => {
      const row = await deploymentOf(request);
      await deleteDeployment(ctx, row);
      ctx.deploymentChanges.changed(row.slug);
      await serving.changed(servedTarget(toDeployment(ctx, row)), null);
    },
  });

  serveRoutes(app, keysApi, {
    listDeploymentKeys: async (request) => listKeys(ctx, (await deploymentOf(request)).id),
    createDeploymentKey: async (request, reply) => {
      const row = await deploymentOf(request);
      if (!isValidKeyLabel(request.body.label)) throw badRequest(KEY_LABEL_RULE);
      // The only response that ever carries a key's plaintext; never cache it anywhere.
      reply.header("cache-control", "no-store");
      const { label, ...rules } = request.body;
      ruleColumns(rules);
      const key = await createKey(ctx, row.id, normalizeKeyLabel(label), rules);
      ctx.deploymentChanges.changed(row.slug);
      return key;
    },
    updateDeploymentKey: async (request) => {
      const row = await deploymentOf(request);
      const { label, ...rules } = request.body;
      if (label !== undefined && !isValidKeyLabel(label)) throw badRequest(KEY_LABEL_RULE);
      const key = await updateKey(ctx, row.id, request.params.keyId, {
        ...ruleColumns(rules),
        ...(label !== undefined ? { label: normalizeKeyLabel(label) } : {}),
      });
      ctx.deploymentChanges.changed(row.slug);
      return key;
    },
    rotateDeploymentKey: async (request, reply) => {
      const row = await deploymentOf(request);
      reply.header("cache-control", "no-store");
      const key = await rotateKey(ctx, row.id, request.params.keyId, request.body.graceSeconds);
      ctx.deploymentChanges.changed(row.slug);
      return key;
    },
    getDeploymentUsage: async (request) => deploymentUsage(ctx, (await deploymentOf(request)).id, Date.now() - 86_400_000),
    getDeploymentUsageReport: async (request) => usageReport(ctx, (await deploymentOf(request)).id, usageRange(request.params.range)),
    revokeDeploymentKey: async (request) => {
      const row = await deploymentOf(request);
      await revokeKey(ctx, row.id, request.params.keyId);
      ctx.deploymentChanges.changed(row.slug);
    },
  });

  // The same report as a file: CSV by default (spreadsheets), or JSON.
  serveRoute(app, usageExportRoute, async (request, reply) => {
    const row = await deploymentOf(request);
    const format = request.query.format ?? "csv";
    const report = await usageReport(ctx, row.id, usageRange(request.params.range));
    void reply.header("content-disposition", contentDisposition(usageFileName(row.slug, report.range, format)));
    if (format === "json") return reply.type("application/json").send(JSON.stringify(report));
    return reply.type("text/csv; charset=utf-8").send(usageReportCsv(report));
  });
}

function usageRange(range: string): UsageRange {
  if (!(USAGE_RANGES as readonly string[]).includes(range)) throw badRequest(USAGE_RANGE_RULE);
  return range as UsageRange;
}

function requiredProjectId(projectId: string | undefined): string {
  if (!projectId) throw badRequest("projectId is required (query parameter or body field)");
  return projectId;
}
