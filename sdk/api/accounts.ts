/** Accounts: the signed-in user, orgs and projects, and anonymous sign-up. */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";
import { route } from "./route.js";

export const Project = T.Object({ id: T.String(), orgId: T.String(), orgSlug: T.String(), slug: T.String(), name: T.String(), createdAt: T.String() });
export type Project = Static<typeof Project>;

export const Me = T.Object({
  user: T.Object({ id: T.String(), kind: T.Union([T.Literal("anonymous"), T.Literal("oauth")]), name: T.String() }),
  orgs: T.Array(T.Object({ id: T.String(), slug: T.String(), name: T.String() })),
  projects: T.Array(Project),
});
export type Me = Static<typeof Me>;

/** The project a call is scoped to; without it, calls by id look in all of the user's projects. */
export const ProjectQuery = T.Object({ projectId: T.Optional(T.String()) });

const CreateProjectBody = T.Object({
  name: T.String({ minLength: 1, maxLength: 80, errorMessage: "name must be 1 to 80 characters" }),
  orgId: T.Optional(T.String()),
});

export const accountsApi = {
  me: route({ method: "GET", path: "/v1/me", response: Me }),
  listProjects: route({ method: "GET", path: "/v1/projects", response: T.Array(Project) }),
  createProject: route({
    method: "POST",
    path: "/v1/projects",
    body: CreateProjectBody,
    args: (input: Static<typeof CreateProjectBody>) => ({ body: input }),
    response: Project,
    status: 201,
  }),
};

/** Mints an anonymous user and its bearer token; the one route that takes no token. */
export const anonymousTokenRoute = route({
  method: "POST",
  path: "/v1/auth/anonymous",
  response: T.Object({ token: T.String(), userId: T.String(), kind: T.Literal("anonymous") }),
  status: 201,
});
