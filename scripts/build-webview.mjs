#!/usr/bin/env node
/**
 * Builds the Svelte webview (DESIGN.md 3): the browser SPA served by the studio and the VS Code
 * panel entry points, which mount the same components with the vscode transport.
 *
 *   node scripts/build-webview.mjs [--out dist/webview] [--minify]
 *
 * Output: index.html (with the `__SVC_STUDIO_TOKEN__` meta placeholder the studio replaces),
 * app.js + app.css, jobDetail.js/.css, endpointDetail.js/.css, compareJobs.js/.css, datasets.js/.css,
 * playground.js/.css, codicon.css + codicon.ttf.
 * Type-checking is a separate `tsc --noEmit` step, as esbuild only strips types.
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";
import sveltePlugin from "esbuild-svelte";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const require = createRequire(import.meta.url);

/** Placeholder the studio server replaces with the per-launch CSRF token (DESIGN.md 8). */
export const STUDIO_TOKEN_PLACEHOLDER = "__SVC_STUDIO_TOKEN__";

const ENTRY_POINTS = {
  app: "webview/app/main.ts",
  jobDetail: "webview/panels/jobDetail.ts",
  endpointDetail: "webview/panels/endpointDetail.ts",
  compareJobs: "webview/panels/compareJobs.ts",
  datasets: "webview/panels/datasets.ts",
  playground: "webview/panels/playground.ts",
};

/**
 * vscode-elements set their own role, tabindex and key handling at runtime (a vscode-button is a
 * focusable role="button" that clicks on Enter/Space), which Svelte's static a11y check cannot see.
 * Scrollable regions are focusable on purpose so keyboard users can scroll them.
 * @param {{ code: string, message: string }} warning
 */
function keepWarning(warning) {
  if (warning.code === "a11y_no_noninteractive_tabindex") return false;
  const aboutVscodeElement = warning.message.includes("<vscode-");
  return !(aboutVscodeElement && (warning.code === "a11y_no_static_element_interactions" || warning.code === "a11y_click_events_have_key_events"));
}

/**
 * @param {{ outDir?: string, minify?: boolean }} [options]
 * @returns {Promise<{ outDir: string, files: string[] }>}
 */
export async function buildWebview({ outDir = path.join(root, "dist/webview"), minify = false } = {}) {
  outDir = path.resolve(outDir);
  await mkdir(outDir, { recursive: true });
  const result = await esbuild.build({
    absWorkingDir: root,
    entryPoints: ENTRY_POINTS,
    outdir: outDir,
    bundle: true,
    format: "esm",
    platform: "browser",
    target: ["chrome114"],
    minify,
    sourcemap: minify ? false : "linked",
    metafile: true,
    logLevel: "warning",
    conditions: ["svelte", "browser"],
    mainFields: ["svelte", "browser", "module", "main"],
    // The codicon font is referenced by codicon.css, which is copied next to the bundles below.
    loader: { ".ttf": "file" },
    assetNames: "[name]",
    define: { "process.env.NODE_ENV": JSON.stringify(minify ? "production" : "development") },
    plugins: [
      sveltePlugin({
        compilerOptions: { css: "external", dev: false, runes: true },
        filterWarnings: keepWarning,
      }),
    ],
  });

  const codiconDir = path.dirname(require.resolve("@vscode/codicons/dist/codicon.css"));
  await copyFile(path.join(codiconDir, "codicon.css"), path.join(outDir, "codicon.css"));
  await copyFile(path.join(codiconDir, "codicon.ttf"), path.join(outDir, "codicon.ttf"));
  await writeFile(path.join(outDir, "index.html"), indexHtml());

  const files = Object.keys(result.metafile.outputs).map((file) => path.relative(outDir, path.resolve(root, file)));
  return { outDir, files: [...files, "codicon.css", "codicon.ttf", "index.html"] };
}

/** The SPA page. Relative asset URLs so the studio can serve it under any path. */
function indexHtml() {
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <meta name="color-scheme" content="light dark" />
    <meta name="svc-studio-token" content="${STUDIO_TOKEN_PLACEHOLDER}" />
    <link rel="icon" href="data:," />
    <title>svc studio</title>
    <link rel="stylesheet" href="codicon.css" id="vscode-codicon-stylesheet" />
    <link rel="stylesheet" href="app.css" />
  </head>
  <body>
    <div id="app"></div>
    <script type="module" src="app.js"></script>
  </body>
</html>
`;
}

async function main() {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf("--out");
  const outDir = outIndex >= 0 ? args[outIndex + 1] : undefined;
  const started = Date.now();
  const { outDir: written, files } = await buildWebview({ outDir, minify: args.includes("--minify") });
  console.log(`build-webview: ${files.length} files in ${path.relative(process.cwd(), written) || "."} (${Date.now() - started} ms)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
