import assert from "node:assert/strict";
import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

interface BuildModule {
  buildWebview(options: { outDir: string; minify?: boolean }): Promise<{ outDir: string; files: string[] }>;
}

describe("scripts/build-webview.mjs", function () {
  this.timeout(60_000);
  let outDir: string;

  before(async () => {
    outDir = await mkdtemp(path.join(os.tmpdir(), "svc-webview-build-"));
  });
  after(async () => {
    await rm(outDir, { recursive: true, force: true });
  });

  it("writes index.html with the token placeholder, the bundles and the codicon font", async () => {
    // A runtime path keeps tsc from type-resolving the .mjs (the project has no allowJs).
    const modulePath = pathToFileURL(path.resolve("scripts/build-webview.mjs")).href;
    const { buildWebview } = (await import(modulePath)) as BuildModule;
    await buildWebview({ outDir, minify: true });
    const html = await readFile(path.join(outDir, "index.html"), "utf8");
    assert.match(html, /<meta name="svc-studio-token" content="__SVC_STUDIO_TOKEN__" \/>/);
    assert.match(html, /<script type="module" src="app\.js"><\/script>/);
    for (const file of [
      "app.js",
      "app.css",
      "jobDetail.js",
      "endpointDetail.js",
      "compareJobs.js",
      "compareJobs.css",
      "datasets.js",
      "datasets.css",
      "playground.js",
      "playground.css",
      "codicon.css",
      "codicon.ttf",
    ]) {
      assert.ok((await stat(path.join(outDir, file))).size > 0, file);
    }
    const css = await readFile(path.join(outDir, "app.css"), "utf8");
    assert.match(css, /--vscode-editor-background/, "the fallback theme is bundled");
    assert.match(css, /prefers-color-scheme:\s*dark/);
  });
});
