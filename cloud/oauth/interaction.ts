/**
 * The provider's "interaction" step of a device sign-in: where it sends a browser that chose to
 * approve on the confirm page. A browser proves nothing about who holds it (anyone who can reach
 * the port, through a tunnel or on a shared host, can open the page), so this step never signs
 * anyone in: it says how the owner approves, from a terminal (`svc login --approve CODE`, see
 * ownerApproval.ts), and leaves the code pending for that.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Provider } from "oidc-provider";
import { renderPage } from "./pages.js";

export async function refuseBrowserApproval(provider: Provider, uid: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res).catch(() => undefined);
  if (!details || details.uid !== uid) {
    return sendHtml(res, 400, "Sign-in failed", "This approval link has expired or was opened in another browser. Run <code>svc login</code> again.");
  }
  sendHtml(
    res,
    403,
    "Approve from a terminal",
    "This page cannot approve a sign-in. On the computer that runs the svc cloud, as the user who runs it, run <code>svc login --approve</code> with the code your terminal shows.",
  );
}

function sendHtml(res: ServerResponse, status: number, title: string, message: string): void {
  res.statusCode = status;
  res.setHeader("content-type", "text/html; charset=utf-8");
  res.end(renderPage(title, `<h1>${title}</h1>\n<p class="error">${message}</p>`));
}
