/** Resolves which projects a request may touch: the named one (checked), or all of the user's. */
import type { FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import { requireProject, userProjects } from "../domain/accounts.js";
import { requireUser } from "../http/auth.js";

export async function projectScope(ctx: CloudContext, request: FastifyRequest, projectId: string | undefined): Promise<string[]> {
  const userId = await requireUser(ctx, request);
  if (projectId) return [(await requireProject(ctx, userId, projectId)).id];
  return (await userProjects(ctx, userId)).map((p) => p.id);
}
