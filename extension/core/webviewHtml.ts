/**
 * The HTML page of a detail panel (STYLE.md 5): strict CSP with a fresh nonce per page, scripts
 * only by nonce, styles and fonts only from the webview's own resource origin, no inline style
 * or eval. The built Svelte bundle is loaded as a module script; the codicon stylesheet keeps the
 * id vscode-elements look for.
 */
import { randomBytes } from "node:crypto";

export interface PanelPageAssets {
  /** `webview.cspSource`: the origin `asWebviewUri` URLs live on. */
  cspSource: string;
  /** `asWebviewUri` of the panel's `.js`, `.css` and `codicon.css`. */
  script: string;
  style: string;
  codicons: string;
  title: string;
}

export function newNonce(): string {
  return randomBytes(18).toString("base64");
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return ["default-src 'none'", `script-src 'nonce-${nonce}'`, `style-src ${cspSource}`, `font-src ${cspSource}`, `img-src ${cspSource} data:`].join("; ");
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function panelHtml(assets: PanelPageAssets, nonce: string = newNonce()): string {
  const attr = (value: string) => escapeHtml(value);
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(assets.cspSource, nonce))}" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(assets.title)}</title>
    <link rel="stylesheet" href="${attr(assets.codicons)}" id="vscode-codicon-stylesheet" />
    <link rel="stylesheet" href="${attr(assets.style)}" />
  </head>
  <body>
    <div id="app"></div>
    <script type="module" nonce="${attr(nonce)}" src="${attr(assets.script)}"></script>
  </body>
</html>
`;
}
