/**
 * The provider's "interaction" step of a device sign-in. The person has already approved on the
 * confirm page (a POST carrying the provider's anti-CSRF token), so there is nothing left to ask:
 * sign the local user in, grant the scopes the CLI asked for, and hand back to the provider,
 * which records the approval on the device code and shows the success page.
 *
 * Only a browser holding the provider's interaction cookie for this uid gets here, i.e. the
 * browser that just approved; anything else is an error page.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Provider } from "oidc-provider";
import type { CloudContext } from "../context.js";
import { OAUTH_CLIENT_ID } from "../../sdk/oauth.js";
import { ensureLocalAccount } from "./localAccount.js";
import { renderPage } from "./pages.js";

export async function finishDeviceInteraction(ctx: CloudContext, provider: Provider, uid: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  let details;
  try {
    details = await provider.interactionDetails(req, res);
  } catch {
    return sendHtmlError(res, "This approval link has expired or was opened in another browser. Run <code>svc login</code> again.");
  }
  if (details.uid !== uid || details.params.client_id !== OAUTH_CLIENT_ID) {
    return sendHtmlError(res, "This approval link does not belong to an svc sign-in.");
  }
  const { userId } = await ensureLocalAccount(ctx);
  const grant = (details.grantId && (await provider.Grant.find(details.grantId))) || new provider.Grant({ accountId: userId, clientId: OAUTH_CLIENT_ID });
  if (details.params.scope) grant.addOIDCScope(details.params.scope);
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { login: { accountId: userId }, consent: { grantId } }, { mergeWithLastSubmission: false });
}

function sendHtmlError(res: ServerResponse, message: string): void {
  res.statusCode = 400;
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.end(renderPage("Sign-in failed", `<h1>Sign-in failed</h1>\n<p class="error">${message}</p>`));
}
