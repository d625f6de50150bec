#!/usr/bin/env node
/**
 * Builds the VS Code extension (DESIGN.md 3, STYLE.md 10): two CommonJS bundles for VS Code's
 * Node extension host, `vscode` external, types checked separately
 * (`tsc --noEmit -p extension/tsconfig.json`).
 *
 *   extension.cjs  activate(): trees, commands, panels — small, so activation stays cheap
 *   studio.cjs     the studio server (Fastify + SDK), loaded on first use
 *
 * The webviews come from scripts/build-webview.mjs (dist/webview). The build fails when a native
 * module would end up in a bundle: the extension host must never load one.
 *
 *   node scripts/build-extension.mjs [--out dist/extension] [--tests]
 *   import { buildExtension } from "./scripts/build-extension.mjs"
 */
import { readdirSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import esbuild from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Packages that carry native code or must run under the user's own Node. */
const FORBIDDEN = ["better-sqlite3", "node-llama-cpp", "@tensorflow/", "pg", "kerberos", "oidc-provider"];

// The sources are ES modules; in a CommonJS bundle `import.meta.url` must be derived from __filename.
const importMetaShim = {
  banner: { js: "var __svc_import_meta_url = require('url').pathToFileURL(__filename).href;" },
  define: { "import.meta.url": "__svc_import_meta_url" },
};

const common = {
  absWorkingDir: root,
  bundle: true,
  format: "cjs",
  platform: "node",
  target: "node20",
  external: ["vscode"],
  logLevel: "warning",
  metafile: true,
  ...importMetaShim,
};

function assertNoNativeModules(metafile, bundle) {
  const inputs = Object.keys(metafile.inputs);
  const bad = inputs.filter((file) => file.endsWith(".node") || FORBIDDEN.some((name) => file.includes(`node_modules/${name}`)));
  if (bad.length) throw new Error(`${bundle} would load modules that must stay out of the extension host:\n  ${bad.slice(0, 10).join("\n  ")}`);
}

/**
 * @param {{ outDir?: string, minify?: boolean, tests?: boolean }} [options]
 * @returns {Promise<{ outDir: string, files: string[] }>}
 */
export async function buildExtension({ outDir = path.join(root, "dist", "extension"), minify = true, tests = false } = {}) {
  outDir = path.resolve(outDir);
  await rm(outDir, { recursive: true, force: true });
  await mkdir(outDir, { recursive: true });
  const files = [];
  for (const [name, entry] of [
    ["extension", "extension/extension.ts"],
    ["studio", "extension/studioEntry.ts"],
  ]) {
    const result = await esbuild.build({ ...common, entryPoints: [entry], outfile: path.join(outDir, `${name}.cjs`), minify, sourcemap: "linked" });
    assertNoNativeModules(result.metafile, `${name}.cjs`);
    files.push(`${name}.cjs`);
  }
  if (tests) files.push(...(await buildExtensionTests(path.join(outDir, "test"))));
  return { outDir, files };
}

/**
 * The mocha suites that run inside the extension host (test/extension): `index.cjs` is the
 * `extensionTestsPath` runner, each `*.test.ts` its own bundle; mocha loads from node_modules.
 */
async function buildExtensionTests(outDir) {
  const dir = path.join(root, "test", "extension");
  const entries = readdirSync(dir).filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"));
  await esbuild.build({
    ...common,
    entryPoints: Object.fromEntries(entries.map((file) => [file.replace(/\.ts$/, ""), path.join(dir, file)])),
    outdir: outDir,
    outExtension: { ".js": ".cjs" },
    external: ["vscode", "mocha"],
    sourcemap: "inline",
  });
  return entries.map((file) => `test/${file.replace(/\.ts$/, ".cjs")}`);
}

async function main() {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf("--out");
  const started = Date.now();
  const { outDir, files } = await buildExtension({ outDir: outIndex >= 0 ? args[outIndex + 1] : undefined, tests: args.includes("--tests") });
  console.log(`build-extension: ${files.length} files in ${path.relative(process.cwd(), outDir) || "."} (${Date.now() - started} ms)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
