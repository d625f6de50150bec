#!/usr/bin/env node
/**
 * `npm run package`: builds the extension bundles and packs the VSIX with @vscode/vsce.
 * `--no-dependencies`: the extension is bundled and loads nothing from node_modules; what it
 * ships is decided by .vscodeignore (extension.cjs, studio.cjs, dist/webview, media).
 * The manifest's `files` list is the npm tarball's, and vsce refuses a folder with both: it packs a
 * copy of the extension's files whose package.json leaves `files` out.
 *
 *   node scripts/package-vsix.mjs [--out dist/svc-<version>.vsix]
 *   import { packageVsix } from "./scripts/package-vsix.mjs"
 */
import { execFile as execFileCb } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFile = promisify(execFileCb);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/**
 * Packs the extension laid out in `dir` (default: this repo, after building the extension; the
 * webviews must have been built by `npm run build`).
 * @param {{ dir?: string, out?: string, build?: boolean }} [options]
 * @returns {Promise<{ vsix: string, bytes: number }>}
 */
export async function packageVsix({ dir = root, out, build = dir === root } = {}) {
  const version = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")).version;
  out = path.resolve(out ?? path.join(dir, "dist", `svc-${version}.vsix`));
  if (build) {
    const { buildExtension } = await import("./build-extension.mjs");
    await buildExtension({ outDir: path.join(dir, "dist", "extension") });
  }
  if (!existsSync(path.join(dir, "dist", "webview", "jobDetail.js"))) throw new Error("dist/webview is missing: run `npm run build` first");
  await mkdir(path.dirname(out), { recursive: true });
  const vsce = path.join(root, "node_modules", "@vscode", "vsce", "vsce");
  const staged = await stageForVsce(dir);
  try {
    await execFile(process.execPath, [vsce, "package", "--no-dependencies", "--out", out], {
      cwd: staged,
      maxBuffer: 16 * 1024 * 1024,
    });
  } finally {
    await rm(staged, { recursive: true, force: true });
  }
  return { vsix: out, bytes: statSync(out).size };
}

/** What the VSIX is made of, copied from `dir` into a temp folder, with `files` dropped from package.json. */
async function stageForVsce(dir) {
  const staged = await mkdtemp(path.join(os.tmpdir(), "svc-vsix-"));
  const manifest = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8"));
  delete manifest.files;
  await writeFile(path.join(staged, "package.json"), JSON.stringify(manifest, null, 2));
  for (const entry of [
    ".vscodeignore",
    "README.md",
    "CHANGELOG.md",
    "LICENSE",
    "media",
    "dist/extension/extension.cjs",
    "dist/extension/studio.cjs",
    "dist/webview",
  ]) {
    if (existsSync(path.join(dir, entry))) await cp(path.join(dir, entry), path.join(staged, entry), { recursive: true });
  }
  return staged;
}

async function main() {
  const args = process.argv.slice(2);
  const outIndex = args.indexOf("--out");
  const { vsix, bytes } = await packageVsix({ out: outIndex >= 0 ? args[outIndex + 1] : undefined });
  console.log(`package-vsix: ${path.relative(process.cwd(), vsix)} (${(bytes / 1024 / 1024).toFixed(2)} MB)`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error.stderr || error.stdout || error);
    process.exit(1);
  });
}
