/**
 * OAuth 2.0 device authorization grant with refresh tokens (oidc-provider), mounted on the
 * control plane: POST /v1/oauth/device/code, POST /v1/oauth/token, POST /v1/oauth/revoke, the
 * owner's approval POST /v1/oauth/device/approve, and the page GET /device (check or deny a code).
 * Returns a resolver that turns an OAuth access token into a principal for the bearer-auth layer.
 *
 * The provider's issuer is the cloud URL, which is known only after listen() (port 0 picks a free
 * port), so the provider is created on first use; keys are loaded here, so a broken key file
 * stops the cloud at start rather than at the first sign-in.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { FastifyInstance } from "fastify";
import type { Provider } from "oidc-provider";
import type { CloudContext, TokenResolver } from "../context.js";
import { sweepExpiredPayloads } from "./adapter.js";
import { refuseBrowserApproval } from "./interaction.js";
import { loadOrCreateKeys } from "./keys.js";
import { approveAsOwner } from "./ownerApproval.js";
import { loadOrCreateOwnerKey } from "./ownerKey.js";
import { createProvider } from "./provider.js";
import { mountOAuthRoutes } from "./routes.js";
import { accessTokenResolver } from "./tokenResolver.js";

export async function mountOAuth(app: FastifyInstance, ctx: CloudContext): Promise<TokenResolver> {
  const keys = await loadOrCreateKeys(ctx.dataDir);
  const ownerKey = await loadOrCreateOwnerKey(ctx.dataDir);
  await sweepExpiredPayloads(ctx.db);

  let creating: Promise<{ provider: Provider; handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> }> | undefined;
  const lazyProvider = () =>
    (creating ??= createProvider(ctx, keys).then(
      (provider) => ({ provider, handle: provider.callback() }),
      (err: unknown) => {
        creating = undefined; // let the next request try again
        throw err;
      },
    ));

  mountOAuthRoutes(app, {
    provider: async (req, res) => (await lazyProvider()).handle(req, res),
    interaction: async (uid, req, res) => refuseBrowserApproval((await lazyProvider()).provider, uid, req, res),
    ownerApproval: async (req, res) => approveAsOwner(ctx, (await lazyProvider()).provider, ownerKey, req, res),
  });
  return accessTokenResolver(async () => (await lazyProvider()).provider);
}
