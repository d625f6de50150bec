#!/usr/bin/env node
/**
 * `npm run package`: builds the extension bundles and packs the VSIX with @vscode/vsce.
 * `--no-dependencies`: the extension is bundled and loads nothing from node_modules; what it
 * ships is decided by .vscodeignore (extension.cjs, studio.cjs, dist/webview, media).
 *
 *   node scripts/package-vsix.mjs [--out dist/svc-<version>.vsix]
 *   import { packageVsix } from "./scripts/package-vsix.mjs"
 */
import { execFile as execFileCb } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
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
  // --skip-license: the license is stated in package.json; the repo has no LICENSE file yet.
  await execFile(process.execPath, [vsce, "package", "--no-dependencies", "--skip-license", "--allow-missing-repository", "--out", out], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  return { vsix: out, bytes: statSync(out).size };
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
