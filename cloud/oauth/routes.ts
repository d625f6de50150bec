/**
 * Mounts the provider's endpoints on the Fastify control plane. Each route hijacks the reply in
 * its onRequest hook, before Fastify parses the body (the provider reads and validates the
 * urlencoded body itself), and hands the raw Node request and response to the provider, which
 * answers OAuth errors in the RFC 6749 format (`{"error","error_description"}`) that device-flow
 * clients expect, not in our envelope. Only these paths reach the provider; everything else it
 * could serve stays unreachable.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from "fastify";
import { OAUTH_ROUTES } from "./provider.js";

export interface OAuthHandlers {
  /** The provider's own request handler (created on first use). */
  provider(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** Our interaction step for one interaction uid. */
  interaction(uid: string, req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** The owner's approval of a device code from a terminal. */
  ownerApproval(req: IncomingMessage, res: ServerResponse): Promise<void>;
}

const PROVIDER_ROUTES: [HTTPMethods, string][] = [
  ["POST", OAUTH_ROUTES.deviceAuthorization],
  ["POST", OAUTH_ROUTES.token],
  ["POST", OAUTH_ROUTES.revocation],
  ["GET", OAUTH_ROUTES.codeVerification],
  ["POST", OAUTH_ROUTES.codeVerification],
  ["GET", `${OAUTH_ROUTES.codeVerification}/:uid`],
];

/**
 * For the HTML pages: no framing (the approve button must not be clickjacked), no scripts except
 * the provider's own inline auto-submit form (it adds that script's hash to script-src), forms
 * post only back here, and the user code never leaks in a Referer.
 */
const SECURITY_HEADERS: Record<string, string> = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; script-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
};

export function mountOAuthRoutes(app: FastifyInstance, handlers: OAuthHandlers): void {
  for (const [method, url] of PROVIDER_ROUTES) {
    app.route({ method, url, onRequest: hijacked((request, res) => handlers.provider(request.raw, res)), handler: unreachable });
  }
  app.route({
    method: "GET",
    url: `${OAUTH_ROUTES.interactionPrefix}:uid`,
    onRequest: hijacked((request, res) => handlers.interaction((request.params as { uid: string }).uid, request.raw, res)),
    handler: unreachable,
  });
  app.route({
    method: "POST",
    url: OAUTH_ROUTES.ownerApproval,
    onRequest: hijacked((request, res) => handlers.ownerApproval(request.raw, res)),
    handler: unreachable,
  });
}

function hijacked(handle: (request: FastifyRequest, res: ServerResponse) => Promise<void>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.hijack();
    const res = reply.raw;
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    try {
      await handle(request, res);
    } catch (err) {
      request.log.error({ err }, "OAuth request failed");
      if (!res.headersSent) {
        res.statusCode = 500;
        res.setHeader("content-type", "application/json; charset=utf-8");
        res.end(JSON.stringify({ error: "server_error", error_description: "internal error" }));
      } else {
        res.destroy();
      }
    }
  };
}

async function unreachable(): Promise<never> {
  throw new Error("OAuth routes are answered in their onRequest hook");
}
