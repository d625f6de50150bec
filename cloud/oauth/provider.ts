/**
 * The oidc-provider configuration: an OAuth 2.0 device authorization server (RFC 8628) for one
 * public client, the svc CLI, issuing opaque access tokens and rotating refresh tokens. Everything
 * it does not need is switched off, and every default hook that would print a "you SHOULD change
 * this" notice is replaced.
 */
import type { Provider } from "oidc-provider";
import type { CloudContext } from "../context.js";
import { OAUTH_CLIENT_ID } from "../../sdk/oauth.js";
import { kyselyAdapter } from "./adapter.js";
import { importProvider } from "./importProvider.js";
import type { ProviderKeys } from "./keys.js";
import { findUserName, localUserName } from "./localAccount.js";
import { codeEntryPage, confirmPage, errorPage, successPage } from "./pages.js";

export const OAUTH_ROUTES = {
  deviceAuthorization: "/v1/oauth/device/code",
  token: "/v1/oauth/token",
  revocation: "/v1/oauth/revoke",
  /** The page people open; the provider also serves `/device/:uid` (resume after approval). */
  codeVerification: "/device",
  /** Where the provider sends a browser that chose to approve; it never approves (see interaction.ts). */
  interactionPrefix: "/device/interaction/",
  /** The owner approves from a terminal (see ownerApproval.ts). */
  ownerApproval: "/v1/oauth/device/approve",
} as const;

const MINUTE = 60;
const DAY = 24 * 60 * MINUTE;

/** RFC 8628's default polling interval, stated explicitly in the device code response. */
export const POLL_INTERVAL_SECONDS = 5;

export async function createProvider(ctx: CloudContext, keys: ProviderKeys): Promise<Provider> {
  if (!ctx.cloudUrl) throw new Error("the OAuth provider needs the cloud URL, which is known only after listen()");
  const ProviderClass = await importProvider();
  const provider = new ProviderClass(ctx.cloudUrl, {
    adapter: kyselyAdapter(ctx.db),
    clients: [
      {
        client_id: OAUTH_CLIENT_ID,
        client_name: "svc CLI",
        application_type: "native",
        token_endpoint_auth_method: "none",
        grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
        response_types: [],
        redirect_uris: [],
      },
    ],
    scopes: ["openid", "offline_access"],
    claims: { openid: ["sub"] },
    jwks: keys.jwks,
    cookies: { keys: keys.cookieKeys },
    findAccount: async (_ctx: unknown, sub: string) => {
      const name = await findUserName(ctx, sub);
      return name === undefined ? undefined : { accountId: sub, claims: async () => ({ sub }) };
    },
    interactions: { url: async (_ctx: unknown, interaction: { uid: string }) => `${OAUTH_ROUTES.interactionPrefix}${interaction.uid}` },
    routes: {
      device_authorization: OAUTH_ROUTES.deviceAuthorization,
      token: OAUTH_ROUTES.token,
      revocation: OAUTH_ROUTES.revocation,
      code_verification: OAUTH_ROUTES.codeVerification,
      // Not mounted on the control plane; moved under /v1/oauth so they can never shadow our routes.
      authorization: "/v1/oauth/authorize",
      userinfo: "/v1/oauth/userinfo",
      jwks: "/v1/oauth/jwks",
    },
    features: {
      deviceFlow: {
        enabled: true,
        charset: "base-20",
        mask: "****-****",
        userCodeInputSource: codeEntryPage,
        userCodeConfirmSource: confirmPage(localUserName),
        successSource: successPage,
      },
      revocation: {
        enabled: true,
        // The CLI revokes its own refresh token on logout; nobody may revoke another client's.
        allowedPolicy: async (_ctx: unknown, client: { clientId: string }, token: { clientId?: string }) => token.clientId === client.clientId,
      },
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      resourceIndicators: { enabled: false },
      userinfo: { enabled: false },
      dPoP: { enabled: false },
    },
    // Browsers never call these endpoints cross-origin; the CLI sends no Origin header.
    clientBasedCORS: () => false,
    renderError: async (pageCtx: Parameters<typeof errorPage>[0], out: Parameters<typeof errorPage>[1]) => errorPage(pageCtx, out),
    ttl: {
      AccessToken: () => 60 * MINUTE,
      DeviceCode: () => 10 * MINUTE,
      Interaction: () => 10 * MINUTE,
      IdToken: () => 60 * MINUTE,
      Session: () => DAY,
      RefreshToken: () => 30 * DAY,
      // The grant must outlive every refresh token rotated from it.
      Grant: () => 365 * DAY,
      ClientCredentials: () => 10 * MINUTE,
    },
  });
  provider.on("device_authorization.success", (_ctx: unknown, body: Record<string, unknown>) => {
    body.interval = POLL_INTERVAL_SECONDS;
  });
  return provider;
}
