import type { CloudContext } from "../context.js";
import { createAnonymousUser, createProject, userOrgs, userProjects } from "../domain/accounts.js";
import { requireUser } from "../http/auth.js";
import { notFound } from "../http/errors.js";
import { CreateProjectBody } from "../http/schemas.js";
import type { App } from "./types.js";

export function accountRoutes(app: App, ctx: CloudContext): void {
  app.post("/v1/auth/anonymous", async (_request, reply) => {
    const { token, userId } = await createAnonymousUser(ctx);
    return reply.status(201).send({ token, userId, kind: "anonymous" });
  });

  app.get("/v1/me", async (request) => {
    const userId = await requireUser(ctx, request);
    const user = await ctx.db.selectFrom("users").selectAll().where("id", "=", userId).executeTakeFirst();
    if (!user) throw notFound("user");
    return {
      user: { id: user.id, kind: user.kind, name: user.name },
      orgs: await userOrgs(ctx, userId),
      projects: await userProjects(ctx, userId),
    };
  });

  app.get("/v1/projects", async (request) => userProjects(ctx, await requireUser(ctx, request)));

  app.post("/v1/projects", { schema: { body: CreateProjectBody } }, async (request, reply) => {
    const userId = await requireUser(ctx, request);
    return reply.status(201).send(await createProject(ctx, userId, request.body));
  });
}
