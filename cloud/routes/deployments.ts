import type { CloudContext } from "../context.js";
import { createDeployment, deleteDeployment, listDeployments, requireDeployment, toDeployment, updateDeployment } from "../domain/deployments.js";
import { createKey, listKeys, revokeKey } from "../domain/deploymentKeys.js";
import { badRequest } from "../http/errors.js";
import { CreateDeploymentBody, CreateKeyBody, KEY_LABEL_RULE, IdParams, KeyParams, ProjectQuery, UpdateDeploymentBody } from "../http/schemas.js";
import { parseTarget } from "../http/target.js";
import { isValidKeyLabel, normalizeKeyLabel } from "../../sdk/keyLabel.js";
import { projectScope } from "./scope.js";
import type { App } from "./types.js";

export function deploymentRoutes(app: App, ctx: CloudContext): void {
  app.get("/v1/deployments", { schema: { querystring: ProjectQuery } }, async (request) => {
    const [projectId] = await projectScope(ctx, request, requiredProjectId(request.query.projectId));
    return listDeployments(ctx, projectId);
  });

  app.post("/v1/deployments", { schema: { querystring: ProjectQuery, body: CreateDeploymentBody } }, async (request, reply) => {
    const { body } = request;
    const [projectId] = await projectScope(ctx, request, requiredProjectId(body.projectId ?? request.query.projectId));
    const deployment = await createDeployment(ctx, projectId, { ...body, target: parseTarget(body.target) });
    ctx.deploymentChanges.changed(deployment.slug);
    return reply.status(201).send(deployment);
  });

  app.get("/v1/deployments/:id", { schema: { params: IdParams, querystring: ProjectQuery } }, async (request) => {
    const scope = await projectScope(ctx, request, request.query.projectId);
    return toDeployment(ctx, await requireDeployment(ctx, scope, request.params.id));
  });

  app.patch("/v1/deployments/:id", { schema: { params: IdParams, querystring: ProjectQuery, body: UpdateDeploymentBody } }, async (request) => {
    const scope = await projectScope(ctx, request, request.query.projectId);
    const row = await requireDeployment(ctx, scope, request.params.id);
    const { target, ...rest } = request.body;
    const updated = await updateDeployment(ctx, row, { ...rest, ...(target !== undefined ? { target: parseTarget(target) } : {}) });
    ctx.deploymentChanges.changed(row.slug);
    return updated;
  });

  app.delete("/v1/deployments/:id", { schema: { params: IdParams, querystring: ProjectQuery } }, async (request, reply) => {
    const scope = await projectScope(ctx, request, request.query.projectId);
    const row = await requireDeployment(ctx, scope, request.params.id);
    await deleteDeployment(ctx, row);
    ctx.deploymentChanges.changed(row.slug);
    return reply.status(204).send();
  });

  app.get("/v1/deployments/:id/keys", { schema: { params: IdParams, querystring: ProjectQuery } }, async (request) => {
    const scope = await projectScope(ctx, request, request.query.projectId);
    const row = await requireDeployment(ctx, scope, request.params.id);
    return listKeys(ctx, row.id);
  });

  app.post("/v1/deployments/:id/keys", { schema: { params: IdParams, querystring: ProjectQuery, body: CreateKeyBody } }, async (request, reply) => {
    const scope = await projectScope(ctx, request, request.query.projectId);
    const row = await requireDeployment(ctx, scope, request.params.id);
    if (!isValidKeyLabel(request.body.label)) throw badRequest(KEY_LABEL_RULE);
    // The only response that ever carries a key's plaintext; never cache it anywhere.
    reply.header("cache-control", "no-store");
    const key = await createKey(ctx, row.id, normalizeKeyLabel(request.body.label));
    ctx.deploymentChanges.changed(row.slug);
    return reply.status(201).send(key);
  });

  app.delete("/v1/deployments/:id/keys/:keyId", { schema: { params: KeyParams, querystring: ProjectQuery } }, async (request, reply) => {
    const scope = await projectScope(ctx, request, request.query.projectId);
    const row = await requireDeployment(ctx, scope, request.params.id);
    await revokeKey(ctx, row.id, request.params.keyId);
    ctx.deploymentChanges.changed(row.slug);
    return reply.status(204).send();
  });
}

function requiredProjectId(projectId: string | undefined): string {
  if (!projectId) throw badRequest("projectId is required (query parameter or body field)");
  return projectId;
}
