/** Users, orgs, projects and the scope check every project-scoped route goes through. */
import type { Project } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { badRequest, forbidden, notFound } from "../http/errors.js";
import { newId, nowIso, randomToken, sha256Hex } from "./ids.js";
import type { ProjectsTable } from "../store/schema.js";

export async function createUserWithOrg(
  ctx: CloudContext,
  user: { id?: string; kind: "anonymous" | "oauth"; name: string },
): Promise<{ userId: string; orgId: string }> {
  const userId = user.id ?? newId();
  const orgId = newId();
  const now = nowIso();
  await ctx.db.transaction().execute(async (trx) => {
    await trx.insertInto("users").values({ id: userId, kind: user.kind, name: user.name, created_at: now }).execute();
    await trx
      .insertInto("orgs")
      .values({ id: orgId, slug: `${user.kind === "anonymous" ? "anon" : "user"}-${orgId.slice(0, 8)}`, name: `${user.name}'s org`, created_at: now })
      .execute();
    await trx.insertInto("org_members").values({ org_id: orgId, user_id: userId, role: "owner" }).execute();
  });
  return { userId, orgId };
}

/** Mints an anonymous user with its own org and returns the bearer token (shown once). */
export async function createAnonymousUser(ctx: CloudContext): Promise<{ token: string; userId: string }> {
  const { userId } = await createUserWithOrg(ctx, { kind: "anonymous", name: "Anonymous" });
  const token = randomToken("svc_anon_");
  await ctx.db
    .insertInto("tokens")
    .values({ id: newId(), user_id: userId, token_hash: sha256Hex(token), kind: "anonymous", created_at: nowIso() })
    .execute();
  return { token, userId };
}

export async function userOrgs(ctx: CloudContext, userId: string) {
  return ctx.db
    .selectFrom("orgs")
    .innerJoin("org_members", "org_members.org_id", "orgs.id")
    .select(["orgs.id", "orgs.slug", "orgs.name"])
    .where("org_members.user_id", "=", userId)
    .orderBy("orgs.created_at")
    .execute();
}

export async function userProjects(ctx: CloudContext, userId: string): Promise<Project[]> {
  const rows = await projectQuery(ctx).where("org_members.user_id", "=", userId).orderBy("projects.created_at").execute();
  return rows.map(toProject);
}

/** Creates a project in the given org (default: the user's first org). */
export async function createProject(ctx: CloudContext, userId: string, input: { name: string; slug?: string; orgId?: string }): Promise<Project> {
  const orgs = await userOrgs(ctx, userId);
  const org = input.orgId ? orgs.find((o) => o.id === input.orgId) : orgs[0];
  if (!org) throw input.orgId ? forbidden("you are not a member of that org") : notFound("org");
  const row: ProjectsTable = {
    id: newId(),
    org_id: org.id,
    slug: input.slug ?? `${slugify(input.name)}-${newId().slice(0, 6)}`,
    name: input.name,
    created_at: nowIso(),
  };
  await ctx.db.insertInto("projects").values(row).execute();
  return toProject({ ...row, org_slug: org.slug });
}

/**
 * The scope check: the project must exist (404) and the user must belong to its org (403).
 * Every project-scoped route calls this before touching project data.
 */
export async function requireProject(ctx: CloudContext, userId: string, projectId: string | undefined): Promise<Project> {
  if (!projectId) throw badRequest("projectId is required for this route");
  const row = await projectQuery(ctx).where("projects.id", "=", projectId).executeTakeFirst();
  if (!row) throw notFound(`project ${projectId}`);
  const member = await ctx.db.selectFrom("org_members").select("user_id").where("org_id", "=", row.org_id).where("user_id", "=", userId).executeTakeFirst();
  if (!member) throw forbidden(`you are not a member of project ${projectId}`);
  return toProject(row);
}

function projectQuery(ctx: CloudContext) {
  return ctx.db
    .selectFrom("projects")
    .innerJoin("orgs", "orgs.id", "projects.org_id")
    .innerJoin("org_members", "org_members.org_id", "projects.org_id")
    .select(["projects.id", "projects.org_id", "projects.slug", "projects.name", "projects.created_at", "orgs.slug as org_slug"])
    .distinct();
}

function toProject(row: ProjectsTable & { org_slug: string }): Project {
  return { id: row.id, orgId: row.org_id, orgSlug: row.org_slug, slug: row.slug, name: row.name, createdAt: row.created_at };
}

function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 30);
  return slug || "project";
}
