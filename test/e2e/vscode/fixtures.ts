/**
 * What every VS Code suite needs: the built extension (and its in-host test bundles), a real cloud
 * with a training worker, and a copy of examples/quickstart whose `node_modules/.bin/svc` is this
 * repo's CLI, with training shortened so a run takes seconds.
 */
import { existsSync } from "node:fs";
import { cp, mkdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startTestCloud, type TestCloud } from "../../support/cloud.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";
import { installTarball, packCheckout, provideSqliteBinding } from "../../support/installedPackage.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const CLI_PATH = path.join(REPO_ROOT, "dist", "cli.mjs");

export interface StagedExtension extends TempDir {
  /** `extensionTestsPath` of the in-host mocha suites. */
  testsPath: string;
}

/**
 * The extension laid out as it installs (package.json, media, dist/extension, dist/webview) in a
 * folder of its own: a `npm run build` running at the same time in the repo (which empties dist/)
 * cannot pull files from under a running workbench. The CLI, SDK and webviews come from
 * `npm run build`; the extension bundles are built here, with the in-host test bundles.
 */
export async function stageExtension(): Promise<StagedExtension> {
  for (const file of [CLI_PATH, path.join(REPO_ROOT, "dist", "webview", "jobDetail.js")]) {
    if (!existsSync(file)) throw new Error(`${path.relative(REPO_ROOT, file)} is missing: run \`npm run build\` first`);
  }
  const dir = await createTempDir("vscode-ext");
  const { buildExtension } = (await import(path.join(REPO_ROOT, "scripts", "build-extension.mjs"))) as {
    buildExtension(options: { outDir: string; tests?: boolean }): Promise<unknown>;
  };
  await buildExtension({ outDir: path.join(dir.path, "dist", "extension"), tests: true });
  await cp(path.join(REPO_ROOT, "dist", "webview"), path.join(dir.path, "dist", "webview"), { recursive: true, filter: (src) => !src.endsWith(".map") });
  await cp(path.join(REPO_ROOT, "media"), path.join(dir.path, "media"), { recursive: true });
  for (const file of ["package.json", ".vscodeignore", "README.md", "CHANGELOG.md", "LICENSE"]) await cp(path.join(REPO_ROOT, file), path.join(dir.path, file));
  // The in-host test runner loads mocha at run time (it is not bundled).
  await mkdir(path.join(dir.path, "node_modules"), { recursive: true });
  await symlink(path.join(REPO_ROOT, "node_modules", "mocha"), path.join(dir.path, "node_modules", "mocha"));
  return Object.assign(dir, { testsPath: path.join(dir.path, "dist", "extension", "test", "index.cjs") });
}

export interface TrainingShape {
  maxSteps: number;
  evalSteps: number;
  saveSteps: number;
}

/** A copy of examples/quickstart with the repo's CLI as its `svc` dependency. */
export async function quickstartWorkspace(shape: TrainingShape): Promise<TempDir> {
  const dir = await createTempDir("vscode-ws");
  await cp(path.join(REPO_ROOT, "examples", "quickstart"), dir.path, {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}.svc`) && !src.includes("node_modules"),
  });
  await mkdir(path.join(dir.path, "node_modules", ".bin"), { recursive: true });
  await symlink(CLI_PATH, path.join(dir.path, "node_modules", ".bin", "svc"));
  const source = path.join(dir.path, "src", "svc", "index.ts");
  let text = await readFile(source, "utf8");
  for (const [field, value] of Object.entries(shape)) {
    const next = text.replace(new RegExp(`${field}: \\d+`), `${field}: ${value}`);
    if (next === text) throw new Error(`examples/quickstart/src/svc/index.ts has no ${field} to shorten`);
    text = next;
  }
  await writeFile(source, text);
  return dir;
}

/**
 * A copy of examples/quickstart with svc-studio installed as a user installs it: this checkout packed,
 * the tarball installed into the workspace (no links), the README's better-sqlite3 step done.
 */
export async function installedQuickstartWorkspace(shape: TrainingShape): Promise<TempDir> {
  const dir = await quickstartWorkspace(shape);
  await rm(path.join(dir.path, "node_modules"), { recursive: true, force: true });
  const tarballs = await createTempDir("vscode-pack");
  try {
    const pack = packCheckout(tarballs.path);
    installTarball(path.join(tarballs.path, pack.filename), dir.path);
  } finally {
    await tarballs.remove();
  }
  provideSqliteBinding(dir.path);
  return dir;
}

/**
 * A fresh cloud with one training worker. Its home becomes SVC_HOME for everything started after
 * this (code-server, and through it the extension host and its `svc` children): no credentials
 * yet, so the suites see the first-run welcome.
 */
export async function cloudForVsCode(): Promise<TestCloud & { restoreEnv(): void }> {
  const cloud = await startTestCloud({ workers: 1 });
  const previous = process.env.SVC_HOME;
  process.env.SVC_HOME = cloud.home;
  return Object.assign(cloud, {
    restoreEnv() {
      if (previous === undefined) delete process.env.SVC_HOME;
      else process.env.SVC_HOME = previous;
    },
  });
}
