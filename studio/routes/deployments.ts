/**
 * Deployments and their keys (SPEC section 4, DESIGN.md section 8): each request opens the session,
 * builds a client and calls the one matching SDK method; cloud errors keep status and message.
 * Scope semantics (SPEC section 2): the list is `[]` without any upstream call, not even minting
 * credentials, while `.svc/state.json` is absent; the first create makes the state (anonymous
 * credentials only, through ProjectSession).
 */
import type { FastifyInstance } from "fastify";
import type { CreateDeploymentInput, UpdateDeploymentInput } from "../../sdk/wire.js";
import type { StudioContext } from "../context.js";

type DeploymentParams = { Params: { id: string } };
type KeyParams = { Params: { id: string; keyId: string } };

export function registerDeploymentRoutes(app: FastifyInstance, ctx: StudioContext): void {
  const clientFor = async () => {
    const session = await ctx.sessions.open();
    return session.client((await session.state())?.projectId);
  };

  app.get("/api/deployments", async () => {
    const client = await ctx.sessions.existingProjectClient();
    return client ? client.listDeployments() : [];
  });

  app.post<{ Body: CreateDeploymentInput }>("/api/deployments", { schema: { body: { type: "object" } } }, async (request, reply) => {
    const client = await (await ctx.sessions.open()).scopedClient();
    const created = await client.createDeployment(request.body);
    return reply.status(201).send(created);
  });

  app.get<DeploymentParams>("/api/deployments/:id", async (request) => (await clientFor()).getDeployment(request.params.id));

  app.patch<DeploymentParams & { Body: UpdateDeploymentInput }>("/api/deployments/:id", { schema: { body: { type: "object" } } }, async (request) =>
    (await clientFor()).updateDeployment(request.params.id, request.body),
  );

  app.delete<DeploymentParams>("/api/deployments/:id", async (request, reply) => {
    await (await clientFor()).deleteDeployment(request.params.id);
    return reply.status(204).send();
  });

  app.get<DeploymentParams>("/api/deployments/:id/keys", async (request) => (await clientFor()).listDeploymentKeys(request.params.id));

  app.post<DeploymentParams & { Body: { label: string } }>(
    "/api/deployments/:id/keys",
    { schema: { body: { type: "object", required: ["label"], properties: { label: { type: "string" } } } } },
    async (request, reply) => {
      // The response carries the plaintext key: never cached, shown once by the UI.
      const created = await (await clientFor()).createDeploymentKey(request.params.id, { label: request.body.label });
      return reply.status(201).header("cache-control", "no-store").send(created);
    },
  );

  app.delete<KeyParams>("/api/deployments/:id/keys/:keyId", async (request, reply) => {
    await (await clientFor()).revokeDeploymentKey(request.params.id, request.params.keyId);
    return reply.status(204).send();
  });
}
