import type { CloudContext } from "../context.js";
import { createDeployment, deleteDeployment, listDeployments, requireDeployment, toDeployment, updateDeployment } from "../domain/deployments.js";
import { createKey, listKeys, revokeKey } from "../domain/deploymentKeys.js";
import { badRequest } from "../http/errors.js";
import { parseTarget } from "../http/target.js";
import { isValidKeyLabel, normalizeKeyLabel } from "../../sdk/keyLabel.js";
import { deploymentsApi } from "../../sdk/api/deployments.js";
import { KEY_LABEL_RULE, keysApi } from "../../sdk/api/keys.js";
import { serveRoutes } from "../../server-shared/serveRoute.js";
import { projectScope } from "./scope.js";
import type { App } from "./types.js";

export function deploymentRoutes(app: App, ctx: CloudContext): void {
  serveRoutes(app, deploymentsApi, {
    listDeployments: async (request) => {
      const [projectId] = await projectScope(ctx, request, requiredProjectId(request.query.projectId));
      return listDeployments(ctx, projectId);
    },
    createDeployment: async (request) => {
      const { body } = request;
      const [projectId] = await projectScope(ctx, request, requiredProjectId(body.projectId ?? request.query.projectId));
      const deployment = await createDeployment(ctx, projectId, { ...body, target: parseTarget(body.target) });
      ctx.deploymentChanges.changed(deployment.slug);
      return deployment;
    },
    getDeployment: async (request) => {
      const scope = await projectScope(ctx, request, request.query.projectId);
      return toDeployment(ctx, await requireDeployment(ctx, scope, request.params.id));
    },
    updateDeployment: async (request) => {
      const scope = await projectScope(ctx, request, request.query.projectId);
      const row = await requireDeployment(ctx, scope, request.params.id);
      const { target, ...rest } = request.body;
      const updated = await updateDeployment(ctx, row, { ...rest, ...(target !== undefined ? { target: parseTarget(target) } : {}) });
      ctx.deploymentChanges.changed(row.slug);
      return updated;
    },
    deleteDeployment: async (request) => {
      const scope = await projectScope(ctx, request, request.query.projectId);
      const row = await requireDeployment(ctx, scope, request.params.id);
      await deleteDeployment(ctx, row);
      ctx.deploymentChanges.changed(row.slug);
    },
  });

  serveRoutes(app, keysApi, {
    listDeploymentKeys: async (request) => {
      const scope = await projectScope(ctx, request, request.query.projectId);
      const row = await requireDeployment(ctx, scope, request.params.id);
      return listKeys(ctx, row.id);
    },
    createDeploymentKey: async (request, reply) => {
      const scope = await projectScope(ctx, request, request.query.projectId);
      const row = await requireDeployment(ctx, scope, request.params.id);
      if (!isValidKeyLabel(request.body.label)) throw badRequest(KEY_LABEL_RULE);
      // The only response that ever carries a key's plaintext; never cache it anywhere.
      reply.header("cache-control", "no-store");
      const key = await createKey(ctx, row.id, normalizeKeyLabel(request.body.label));
      ctx.deploymentChanges.changed(row.slug);
      return key;
    },
    revokeDeploymentKey: async (request) => {
      const scope = await projectScope(ctx, request, request.query.projectId);
      const row = await requireDeployment(ctx, scope, request.params.id);
      await revokeKey(ctx, row.id, request.params.keyId);
      ctx.deploymentChanges.changed(row.slug);
    },
  });
}

function requiredProjectId(projectId: string | undefined): string {
  if (!projectId) throw badRequest("projectId is required (query parameter or body field)");
  return projectId;
}
