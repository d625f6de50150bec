/**
 * The HTML of the device sign-in pages (GET/POST /device): code entry, confirm (shows how the
 * owner approves, and can deny), success, denied, and errors. Plain HTML with inline styles and no external assets: the
 * page is served by a cloud on loopback that may have no internet access.
 *
 * The functions have the signatures oidc-provider's `features.deviceFlow.*Source` and
 * `renderError` hooks expect; the `form` arguments are the provider's own forms (they carry the
 * anti-CSRF token) and are embedded unchanged.
 */
import type { ProviderContext } from "oidc-provider";

const STYLE = `
  body { font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1f2328; background: #f6f8fa; margin: 0; }
  main { max-width: 26rem; margin: 4rem auto; padding: 2rem; background: #fff; border: 1px solid #d0d7de; border-radius: 8px; }
  h1 { font-size: 1.4rem; margin: 0 0 1rem; }
  .code { font: 600 2rem/1.2 ui-monospace, "SFMono-Regular", Menlo, monospace; letter-spacing: .1em; text-align: center; padding: .75rem; margin: 1rem 0; background: #f6f8fa; border-radius: 6px; }
  input[type=text] { box-sizing: border-box; width: 100%; font: 600 1.5rem ui-monospace, Menlo, monospace; text-align: center; text-transform: uppercase; padding: .5rem; margin: .5rem 0 1rem; border: 1px solid #d0d7de; border-radius: 6px; }
  .actions { display: flex; gap: .75rem; }
  button { flex: 1; font: inherit; font-weight: 600; padding: .6rem 1rem; border-radius: 6px; border: 1px solid #d0d7de; background: #f6f8fa; cursor: pointer; }
  button.primary { background: #1f883d; border-color: #1a7f37; color: #fff; }
  .error { color: #cf222e; }
  .muted { color: #59636e; font-size: .9rem; }
`;

function page(ctx: ProviderContext, title: string, body: string): void {
  ctx.type = "html";
  ctx.body = renderPage(title, body);
}

/** A whole page around `body` (trusted HTML; escape anything user-supplied before). */
export function renderPage(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · svc</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
</main>
</body>
</html>`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Why the code entry page is shown again, by the provider's re-render error names. */
function codeProblem(err: Error | undefined): string | null {
  switch (err?.name) {
    case undefined:
      return null;
    case "NoCodeError":
      return "Enter the code first.";
    case "NotFoundError":
      return "No sign-in request has that code. Check it and try again.";
    case "ExpiredError":
      return "That code has expired. Run <code>svc login</code> again for a new one.";
    case "AlreadyUsedError":
      return "That code was already used.";
    default:
      return "Something went wrong. Run <code>svc login</code> again.";
  }
}

export function codeEntryPage(ctx: ProviderContext, form: string, _out?: unknown, err?: Error): void {
  if (err?.name === "AbortedError") return deniedPage(ctx);
  const problem = codeProblem(err);
  page(
    ctx,
    "Sign in to svc",
    `<h1>Sign in to svc</h1>
<p>Enter the code that <code>svc login</code> printed in your terminal.</p>
${problem ? `<p class="error" role="alert">${problem}</p>` : ""}
${form}
<div class="actions"><button class="primary" type="submit" form="op.deviceInputForm">Continue</button></div>`,
  );
}

export function confirmPage(approverName: () => string) {
  return (ctx: ProviderContext, form: string, _client: unknown, _deviceInfo: unknown, userCode: string): void => {
    // No Approve button: a page anyone who reaches the port can open must not sign in (interaction.ts).
    page(
      ctx,
      "Approve sign-in",
      `<h1>Approve sign-in?</h1>
<p>The svc command line asks to sign in as <strong>${escapeHtml(approverName())}</strong> with this code:</p>
<p class="code" id="user-code">${escapeHtml(userCode)}</p>
<p>To approve, run this on the computer that runs the svc cloud, as <strong>${escapeHtml(approverName())}</strong>:</p>
<p><code id="approve-command">svc login --approve ${escapeHtml(userCode)}</code></p>
${form}
<div class="actions">
  <button type="submit" form="op.deviceConfirmForm" name="abort" value="yes">Deny</button>
</div>
<p class="muted">If you did not run <code>svc login</code>, choose Deny.</p>`,
    );
  };
}

export function successPage(ctx: ProviderContext): void {
  page(ctx, "Signed in", `<h1>Signed in</h1>\n<p>The svc command line is now signed in. You can close this page and return to your terminal.</p>`);
}

export function deniedPage(ctx: ProviderContext): void {
  page(ctx, "Sign-in denied", `<h1>Sign-in denied</h1>\n<p>The svc command line was not signed in. You can close this page.</p>`);
}

export function errorPage(ctx: ProviderContext, out: { error?: string; error_description?: string }): void {
  const detail = out.error_description ?? out.error ?? "unknown error";
  page(ctx, "Sign-in failed", `<h1>Sign-in failed</h1>\n<p class="error">${escapeHtml(detail)}</p>\n<p>Run <code>svc login</code> again to start over.</p>`);
}
