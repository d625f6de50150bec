/**
 * svc-studio as a user installs it: `npm pack` of this checkout's built dist/ (without prepack's
 * rebuild, which would empty dist/ under other suites), installed from the tarball into a folder
 * outside the repo (a copy, no links) with every install script blocked. npm reads the packages from
 * its cache (`--prefer-offline`); the registry is asked only for what the cache lacks.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface PackResult {
  name: string;
  filename: string;
  size: number;
  entryCount: number;
  files: { path: string }[];
}

export const npm = (args: string[], cwd: string): string =>
  execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 1024 * 1024 });

/** Packs the checkout into `dir`; the tarball is `path.join(dir, result.filename)`. */
export function packCheckout(dir: string): PackResult {
  if (!existsSync(path.join(REPO_ROOT, "dist", "cli.mjs"))) throw new Error("dist/ is missing: run `npm run build` first");
  return (JSON.parse(npm(["pack", "--ignore-scripts", "--json", "--pack-destination", dir], REPO_ROOT)) as PackResult[])[0];
}

/** Installs the tarball into `project` (created with a package.json when it has none), install scripts blocked. */
export function installTarball(tarball: string, project: string): void {
  mkdirSync(project, { recursive: true });
  const manifest = path.join(project, "package.json");
  if (!existsSync(manifest)) writeFileSync(manifest, JSON.stringify({ name: "my-project", private: true }, null, 2));
  npm(["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", tarball], project);
}

/**
 * What `npm rebuild better-sqlite3` does after the README's approval: prebuild-install downloads the
 * binding from GitHub, which this machine cannot reach, and then node-gyp compiles SQLite for minutes.
 * The checkout's own binding of the same version is the file that step produces, so it is copied in
 * (a stand-in for the build, not for anything svc does); another version gets the real rebuild.
 */
export function provideSqliteBinding(project: string): void {
  const version = (dir: string) => (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { version: string }).version;
  const ours = path.join(REPO_ROOT, "node_modules", "better-sqlite3");
  const theirs = path.join(project, "node_modules", "better-sqlite3");
  if (version(ours) !== version(theirs)) {
    npm(["rebuild", "better-sqlite3"], project);
    return;
  }
  mkdirSync(path.join(theirs, "build", "Release"), { recursive: true });
  copyFileSync(path.join(ours, "build", "Release", "better_sqlite3.node"), path.join(theirs, "build", "Release", "better_sqlite3.node"));
}
