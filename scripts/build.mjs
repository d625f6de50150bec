#!/usr/bin/env node
// Builds everything that ships: the CLI, the SDK entry (+ .d.ts), and — as they exist — the
// extension and the webview bundles. Type checking is its own step (`npm run typecheck`).
import { build } from "esbuild";
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const dist = path.join(root, "dist");
const watchless = { logLevel: "warning", sourcemap: "linked", absWorkingDir: root };

rmSync(dist, { recursive: true, force: true });

// CLI and SDK run under the user's Node with their dependencies installed beside them.
await build({
  ...watchless,
  entryPoints: { cli: "cli/main.ts", sdk: "sdk/index.ts" },
  outdir: dist,
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  packages: "external",
  banner: { js: "import { createRequire as __svcCreateRequire } from 'node:module'; const require = __svcCreateRequire(import.meta.url);" },
});

// Declarations for the SDK entry.
execFileSync(process.execPath, [path.join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.sdk.json"], { cwd: root, stdio: "inherit" });

// The Svelte UI: the studio's SPA and the VS Code panels.
const { buildWebview } = await import("./build-webview.mjs");
await buildWebview({ outDir: path.join(dist, "webview"), minify: true });

// The VS Code extension (with the studio server bundled in, loaded on first use).
const { buildExtension } = await import("./build-extension.mjs");
await buildExtension({ outDir: path.join(dist, "extension") });

console.log("built dist/");
