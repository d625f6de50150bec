/**
 * CORS for the edge, so browser apps can call an endpoint directly. Every origin is allowed by
 * default, as OpenAI-compatible servers do: an endpoint is protected by its key (or is public by
 * choice), not by the caller's origin. `SVC_EDGE_CORS_ORIGINS` (comma-separated origins) narrows
 * it; then only those origins get the headers. Preflights are answered before authentication,
 * since browsers send them without credentials.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { REQUEST_ID_HEADER } from "../http/requestIds.js";
import { IGNORED_FIELDS_HEADER } from "./chatRoutes.js";

const EXPOSED = [REQUEST_ID_HEADER, "retry-after", IGNORED_FIELDS_HEADER].join(", ");
const DEFAULT_ALLOWED_HEADERS = "authorization, content-type, x-request-id, openai-organization, openai-project";

export function corsOriginsFromEnv(env: NodeJS.ProcessEnv = process.env): string[] | "*" {
  const list = (env.SVC_EDGE_CORS_ORIGINS ?? "").split(",").map((o) => o.trim()).filter(Boolean);
  return list.length === 0 || list.includes("*") ? "*" : list;
}

export function installCors(app: FastifyInstance, origins: string[] | "*"): void {
  const allowOrigin = (request: FastifyRequest): string | null => {
    if (origins === "*") return "*";
    const origin = request.headers.origin;
    return origin && origins.includes(origin) ? origin : null;
  };
  const decorate = (request: FastifyRequest, reply: FastifyReply): boolean => {
    const origin = allowOrigin(request);
    if (origins !== "*") void reply.header("vary", "Origin");
    if (!origin) return false;
    void reply.header("access-control-allow-origin", origin).header("access-control-expose-headers", EXPOSED);
    return true;
  };
  // Callback style: an async hook costs a promise per request.
  app.addHook("onRequest", (request, reply, done) => {
    decorate(request, reply);
    done();
  });
  app.options("*", async (request, reply) => {
    if (!decorate(request, reply)) return reply.status(403).send({ error: { message: "this origin may not call the endpoint", type: "invalid_request_error", param: null, code: "cors_origin_not_allowed" } });
    const asked = request.headers["access-control-request-headers"];
    return reply
      .status(204)
      .header("access-control-allow-methods", "GET, POST, OPTIONS")
      .header("access-control-allow-headers", typeof asked === "string" && asked ? asked : DEFAULT_ALLOWED_HEADERS)
      .header("access-control-max-age", "600")
      .send();
  });
}
