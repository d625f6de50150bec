/**
 * CORS for the edge, so browser apps can call an endpoint directly. Every origin is allowed by
 * default, as OpenAI-compatible servers do: an endpoint is protected by its key (or is public by
 * choice), not by the caller's origin. A deployment's own `corsOrigins` list decides for it;
 * without one, `SVC_EDGE_CORS_ORIGINS` (comma-separated origins) narrows the default; then only
 * those origins get the headers. Preflights are answered before authentication, since browsers
 * send them without credentials. Requests without an Origin header (servers, curl) skip all of it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { REQUEST_ID_HEADER } from "../http/requestIds.js";
import { IGNORED_FIELDS_HEADER } from "./generationRoute.js";

const EXPOSED = [REQUEST_ID_HEADER, "retry-after", IGNORED_FIELDS_HEADER].join(", ");
const DEFAULT_ALLOWED_HEADERS = "authorization, content-type, x-request-id, openai-organization, openai-project";

export function corsOriginsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] | "*" {
  const list = (env.SVC_EDGE_CORS_ORIGINS ?? "")
    .split(",")
    .map((o) => o.trim())
    .filter(Boolean);
  return list.length === 0 || list.includes("*") ? "*" : list;
}

/** The deployment's own allow-list for a request (null: none set, or no deployment named), for its slug. */
export type DeploymentOrigins = (slug: string) => Promise<string[] | null>;

/** The slug a request names, in path form (`/d/<slug>/...`) or host form (`<slug>.<deploy domain>`). */
export type SlugOfRequest = (request: FastifyRequest) => string | null;

export function installCors(app: FastifyInstance, defaults: string[] | "*", slugOf: SlugOfRequest, deploymentOrigins: DeploymentOrigins): void {
  const originsFor = async (request: FastifyRequest): Promise<string[] | "*"> => {
    const slug = slugOf(request);
    const own = slug ? await deploymentOrigins(slug).catch(() => null) : null;
    return own ? (own.includes("*") ? "*" : own) : defaults;
  };
  const decorate = (request: FastifyRequest, reply: FastifyReply, origins: string[] | "*"): boolean => {
    const origin = request.headers.origin;
    const allowed = origins === "*" ? "*" : origin && origins.includes(origin) ? origin : null;
    if (origins !== "*") void reply.header("vary", "Origin");
    if (!allowed) return false;
    void reply.header("access-control-allow-origin", allowed).header("access-control-expose-headers", EXPOSED);
    return true;
  };
  // Callback style, and only for browser requests: an async hook costs a promise per request.
  app.addHook("onRequest", (request, reply, done) => {
    if (!request.headers.origin || request.method === "OPTIONS") return done();
    originsFor(request).then((origins) => {
      decorate(request, reply, origins);
      done();
    }, done);
  });
  app.options("*", async (request, reply) => {
    if (!decorate(request, reply, await originsFor(request)))
      return reply
        .status(403)
        .send({ error: { message: "this origin may not call the endpoint", type: "invalid_request_error", param: null, code: "cors_origin_not_allowed" } });
    const asked = request.headers["access-control-request-headers"];
    return reply
      .status(204)
      .header("access-control-allow-methods", "GET, POST, OPTIONS")
      .header("access-control-allow-headers", typeof asked === "string" && asked ? asked : DEFAULT_ALLOWED_HEADERS)
      .header("access-control-max-age", "600")
      .send();
  });
}
