/** Resolves which projects a request may touch: the named one (checked), or all of the user's. */
import type { FastifyRequest } from "fastify";
import type { CloudContext } from "../context.js";
import { requireProject, userProjects } from "../domain/accounts.js";
import { requireUser } from "../http/auth.js";
import { badRequest } from "../http/errors.js";

/** The one project a list-shaped route is asked about: `projectId` is required there (400 without it), and checked. */
export async function requiredProjectScope(ctx: CloudContext, request: FastifyRequest, projectId: string | undefined): Promise<string> {
  if (!projectId) throw badRequest("projectId is required");
  const [id] = await projectScope(ctx, request, projectId);
  return id;
}

export async function projectScope(ctx: CloudContext, request: FastifyRequest, projectId: string | undefined): Promise<string[]> {
  const userId = await requireUser(ctx, request);
  if (projectId) return [(await requireProject(ctx, userId, projectId)).id];
  return (await userProjects(ctx, userId)).map((p) => p.id);
}
