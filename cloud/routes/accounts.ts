import type { CloudContext } from "../context.js";
import { createAnonymousUser, createProject, userOrgs, userProjects } from "../domain/accounts.js";
import { requireUser } from "../http/auth.js";
import { notFound } from "../http/errors.js";
import { accountsApi, anonymousTokenRoute } from "../../sdk/api/accounts.js";
import { serveRoute, serveRoutes } from "../../server-shared/serveRoute.js";
import type { FastifyInstance } from "fastify";

export function accountRoutes(app: FastifyInstance, ctx: CloudContext): void {
  serveRoute(app, anonymousTokenRoute, async () => {
    const { token, userId } = await createAnonymousUser(ctx);
    return { token, userId, kind: "anonymous" as const };
  });

  serveRoutes(app, accountsApi, {
    me: async (request) => {
      const userId = await requireUser(ctx, request);
      const user = await ctx.db.selectFrom("users").selectAll().where("id", "=", userId).executeTakeFirst();
      if (!user) throw notFound("user");
      return {
        user: { id: user.id, kind: user.kind, name: user.name },
        orgs: await userOrgs(ctx, userId),
        projects: await userProjects(ctx, userId),
      };
    },
    listProjects: async (request) => userProjects(ctx, await requireUser(ctx, request)),
    createProject: async (request) => createProject(ctx, await requireUser(ctx, request), request.body),
  });
}
