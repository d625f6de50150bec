/**
 * Bearer-token resolution for OAuth access tokens (opaque, stored by the provider). A token counts
 * only while the provider still finds it (unexpired, not revoked), it was issued to the svc CLI,
 * and its grant still exists (logout and refresh-token replay revoke the grant).
 */
import type { Provider } from "oidc-provider";
import type { TokenResolver } from "../context.js";
import { OAUTH_CLIENT_ID } from "../../sdk/oauth.js";

/** Opaque token values are short base64url strings; anything else is not worth a lookup. */
const PLAUSIBLE_TOKEN = /^[A-Za-z0-9_-]{20,128}$/;

export function accessTokenResolver(getProvider: () => Promise<Provider>): TokenResolver {
  return async (token) => {
    if (!PLAUSIBLE_TOKEN.test(token)) return null;
    const provider = await getProvider();
    const accessToken = await provider.AccessToken.find(token);
    if (!accessToken?.accountId || accessToken.clientId !== OAUTH_CLIENT_ID || !accessToken.grantId) return null;
    const grant = await provider.Grant.find(accessToken.grantId);
    if (!grant || grant.accountId !== accessToken.accountId || grant.clientId !== OAUTH_CLIENT_ID) return null;
    if (accessToken.expiresWithSession && (!accessToken.sessionUid || !(await provider.Session.findByUid(accessToken.sessionUid)))) return null;
    return { kind: "oauth", userId: accessToken.accountId };
  };
}
