import assert from "node:assert/strict";
import { contentSecurityPolicy, newNonce, panelHtml } from "../../../extension/core/webviewHtml.js";

describe("extension/core/webviewHtml", () => {
  const assets = {
    cspSource: "https://x.vscode-cdn.net",
    script: "https://x/jobDetail.js",
    style: "https://x/jobDetail.css",
    codicons: "https://x/codicon.css",
    title: "Job: <demo>",
  };

  it("allows scripts only by nonce and styles only from the webview origin", () => {
    const csp = contentSecurityPolicy(assets.cspSource, "N0nce");
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'nonce-N0nce'/);
    assert.match(csp, /style-src https:\/\/x\.vscode-cdn\.net(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  });

  it("loads the bundle as a module script carrying the nonce, and escapes the title", () => {
    const html = panelHtml(assets, "N0nce");
    assert.match(html, /<script type="module" nonce="N0nce" src="https:\/\/x\/jobDetail.js"><\/script>/);
    assert.match(html, /id="vscode-codicon-stylesheet"/);
    assert.match(html, /<div id="app"><\/div>/);
    assert.match(html, /<title>Job: &#60;demo&#62;<\/title>/);
  });

  it("uses a fresh nonce every time", () => {
    assert.notEqual(newNonce(), newNonce());
    assert.ok(newNonce().length >= 16);
  });
});
