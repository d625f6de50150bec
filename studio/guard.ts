/**
 * The two checks every request passes before any route runs (DESIGN.md section 8):
 * - Host guard against DNS rebinding: the Host header must name loopback with the studio's own
 *   port, so a page on evil.example that rebinds its name to 127.0.0.1 is refused;
 * - CSRF: every request the router hands to a route carries the per-launch token in the header
 *   `X-Svc-Studio-Token`, unless that route is declared public (`config: PUBLIC_ROUTE`: the SPA's
 *   page and files, which the browser loads without it). The check looks at the route the router
 *   matched, never at the raw URL: the router decodes `%61pi`, so a check of the spelling would let
 *   `/%61pi/train` through to the handler of `/api/train`. A route is private unless it says
 *   otherwise, so a new `/api` route cannot forget it. Only a GET of an event stream (a route with `config: EVENT_STREAM_ROUTE`) may carry it as the
 *   query parameter `studioToken` instead, because EventSource cannot set headers; anywhere else a
 *   token in the URL would end up in logs and history, so it is refused there. Cross-origin pages
 *   cannot read the token from our index.html, and no CORS preflight is ever answered, so they
 *   cannot send a request that passes.
 */
import { timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { StudioError } from "./errors.js";

export const TOKEN_HEADER = "x-svc-studio-token";
export const TOKEN_QUERY = "studioToken";

/** Loopback host names as a Host header or `URL.hostname` spells them (IPv6 in brackets). */
export const LOOPBACK_NAMES: ReadonlySet<string> = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** True when `host` is `<loopback name>:<port>` (the port is required: browsers always send it for non-default ports). */
export function isAllowedHost(host: string | undefined, port: number): boolean {
  if (!host) return false;
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(host.trim().toLowerCase());
  if (!match) return false;
  return LOOPBACK_NAMES.has(match[1]!) && Number(match[2]) === port;
}

export function tokenMatches(presented: string | undefined, token: string): boolean {
  if (typeof presented !== "string") return false;
  const a = Buffer.from(presented);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Route config of the GET routes that answer an EventSource: the only ones taking `?studioToken=`. */
export const EVENT_STREAM_ROUTE = { tokenInQuery: true } as const;

/** Route config of the SPA's own page and files: the only routes answered without the token. */
export const PUBLIC_ROUTE = { publicRoute: true } as const;

/** Whether the route the router matched may be answered without the token (unmatched requests are not: the 404 needs it too). */
function isPublicRoute(request: FastifyRequest): boolean {
  const config = request.routeOptions.config as { publicRoute?: boolean } | undefined;
  return config?.publicRoute === true;
}

function acceptsTokenInQuery(request: FastifyRequest): boolean {
  const config = request.routeOptions.config as { tokenInQuery?: boolean } | undefined;
  return request.method === "GET" && config?.tokenInQuery === true;
}

function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers[TOKEN_HEADER];
  if (typeof header === "string") return header;
  if (!acceptsTokenInQuery(request)) return undefined;
  const query = request.query as Record<string, unknown> | undefined;
  const value = query?.[TOKEN_QUERY];
  return typeof value === "string" ? value : undefined;
}

/**
 * `extraHosts` holds exact `host:port` values the embedding vouches for: VS Code adds the authority
 * its port forwarding gives the studio (code-server's proxy forwards with its own Host header).
 */
export function installGuards(app: FastifyInstance, options: { token: string; port: () => number; extraHosts: ReadonlySet<string> }): void {
  app.addHook("onRequest", async (request) => {
    const host = request.headers.host?.trim().toLowerCase();
    if (!isAllowedHost(host, options.port()) && !(host && options.extraHosts.has(host))) {
      throw new StudioError(403, "forbidden_host", `The studio only answers requests for 127.0.0.1:${options.port()} or localhost:${options.port()}.`);
    }
    if (!isPublicRoute(request) && !tokenMatches(presentedToken(request), options.token)) {
      throw new StudioError(403, "invalid_studio_token", "Missing or wrong studio token: reload the studio page.");
    }
  });
}
