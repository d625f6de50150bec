// A real VS Code workbench for tests: code-server 4.100.3 (VS Code 1.100.3) from npm, with its
// Node extension host, in a throwaway profile. See shared/VSCODE-TESTING.md for why code-server
// (no VS Code download is possible here) and how the test payload URL works.
import { execFile as execFileCb } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { freePort } from "./ports.js";
import { spawnProcess, waitForUrl } from "./processes.js";
import { createTempDir } from "./tmp.js";

const execFile = promisify(execFileCb);
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const INSTALL_SCRIPT = path.join(REPO_ROOT, "scripts", "install-code-server.mjs");

// Settings that keep the workbench quiet and deterministic: no welcome page on top of what the
// test looks at, no update or gallery checks against a network we do not have.
const BASE_SETTINGS: Record<string, unknown> = {
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "security.workspace.trust.enabled": false,
};

let installed: Promise<string> | undefined;

/**
 * Path of the code-server binary, installing it first if needed (the script is a no-op taking
 * ~0.1 s when the marker file is present; from scratch it takes about a minute).
 */
export function codeServerBinary(): Promise<string> {
  installed ??= execFile(process.execPath, [INSTALL_SCRIPT], { maxBuffer: 16 * 1024 * 1024 })
    .then(({ stdout }) => stdout.trim().split("\n").pop()!.trim())
    .catch((err: Error & { stdout?: string; stderr?: string }) => {
      installed = undefined;
      throw new Error(`installing code-server failed: ${err.message}\n${err.stdout ?? ""}${err.stderr ?? ""}`);
    });
  return installed;
}

export interface CodeServerOptions {
  /** Folder opened in the workbench. */
  workspace: string;
  /** Extension under development, loaded from source like VS Code's F5. */
  extensionDevelopmentPath?: string;
  /** Merged over the defaults into User/settings.json. */
  settings?: Record<string, unknown>;
  /** Copy code-server's own log to stdout (noisy; for debugging). */
  echo?: boolean;
  /** A .vsix installed with `--install-extension` into the fresh extensions dir before start (the packaged case). */
  installVsix?: string;
}

export interface WorkbenchUrlOptions {
  /** Module whose run() the extension host calls as the test runner (absolute path). */
  extensionTestsPath?: string;
}

export interface CodeServer {
  /** Workbench URL: the workspace, with the development extension loaded if one was given. */
  readonly url: string;
  /** http://127.0.0.1:PORT, for /healthz and friends. */
  readonly baseUrl: string;
  readonly port: number;
  /** Builds a workbench URL, e.g. with a test payload. */
  workbenchUrl(options?: WorkbenchUrlOptions): string;
  /** code-server's recent output, for failure messages. */
  recentOutput(): string;
  /** Folder names under the extensions dir after an `installVsix` (e.g. `svc.svc-studio-0.1.0`). */
  readonly installedExtensions: string[];
  /** Kills code-server's whole process group (the extension host would outlive it) and deletes its dirs. */
  stop(): Promise<void>;
}

/** Environment for code-server: the caller's, minus anything that would tie it to a parent VS Code. */
function isolatedEnv(home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("VSCODE_") || key === "ELECTRON_RUN_AS_NODE") continue;
    env[key] = value;
  }
  env.XDG_CONFIG_HOME = path.join(home, "xdg-config");
  env.XDG_DATA_HOME = path.join(home, "xdg-data");
  env.XDG_CACHE_HOME = path.join(home, "xdg-cache");
  return env;
}

export async function startCodeServer(options: CodeServerOptions): Promise<CodeServer> {
  const bin = await codeServerBinary();
  const home = await createTempDir("code-server");
  try {
    const userDataDir = path.join(home.path, "user-data");
    const extensionsDir = path.join(home.path, "extensions");
    await mkdir(path.join(userDataDir, "User"), { recursive: true });
    await mkdir(extensionsDir, { recursive: true });
    await writeFile(path.join(userDataDir, "User", "settings.json"), JSON.stringify({ ...BASE_SETTINGS, ...options.settings }, null, 2));
    const installedExtensions: string[] = [];
    if (options.installVsix) {
      await execFile(bin, ["--user-data-dir", userDataDir, "--extensions-dir", extensionsDir, "--install-extension", options.installVsix], {
        env: isolatedEnv(home.path),
        maxBuffer: 8 * 1024 * 1024,
      });
      installedExtensions.push(...(await readdir(extensionsDir)).filter((name) => !name.startsWith(".")));
    }

    const port = await freePort();
    const workspace = path.resolve(options.workspace);
    const proc = spawnProcess(
      bin,
      [
        "--auth",
        "none",
        "--bind-addr",
        `127.0.0.1:${port}`,
        "--user-data-dir",
        userDataDir,
        "--extensions-dir",
        extensionsDir,
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        workspace,
      ],
      { env: isolatedEnv(home.path), name: "code-server", echo: options.echo },
    );

    const baseUrl = `http://127.0.0.1:${port}`;
    const stop = async () => {
      await proc.stop();
      await home.remove();
    };
    try {
      await waitForUrl(`${baseUrl}/healthz`, { process: proc, timeoutMs: 30_000 });
    } catch (err) {
      await stop();
      throw err;
    }

    const extensionDevelopmentPath = options.extensionDevelopmentPath && path.resolve(options.extensionDevelopmentPath);
    const workbenchUrl = ({ extensionTestsPath }: WorkbenchUrlOptions = {}) => {
      // The payload is how the web workbench receives what the desktop gets as CLI arguments;
      // paths are vscode-remote URIs because the extension host runs on the server side.
      const remote = (file: string) => `vscode-remote://127.0.0.1:${port}${path.resolve(file)}`;
      const payload: [string, string][] = [];
      if (extensionDevelopmentPath) payload.push(["extensionDevelopmentPath", remote(extensionDevelopmentPath)]);
      if (extensionTestsPath) payload.push(["extensionTestsPath", remote(extensionTestsPath)]);
      const query = `folder=${encodeURIComponent(workspace)}` + (payload.length ? `&payload=${encodeURIComponent(JSON.stringify(payload))}` : "");
      return `${baseUrl}/?${query}`;
    };
    return {
      url: workbenchUrl(),
      baseUrl,
      port,
      workbenchUrl,
      recentOutput: () => proc.recentOutput(),
      installedExtensions,
      stop,
    };
  } catch (err) {
    await home.remove();
    throw err;
  }
}

/**
 * The workbench logs each entry as an array of console arguments. Joined into one string; the
 * gallery lookup failure every offline session logs (harmless) is cut to its first line.
 */
function formatAutomationLog(message: unknown): string {
  const parts = Array.isArray(message) ? message : [message];
  const text = parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ");
  return text.includes("ENOTFOUND open-vsx.org") ? `${text.split("\n")[0]} (offline gallery, harmless)` : text;
}

export interface ExtensionTestOptions {
  extensionDevelopmentPath: string;
  /** Module exporting `run(): Promise<void>` (VS Code's test runner contract), e.g. out/test/index.js. */
  extensionTestsPath: string;
  workspace: string;
  settings?: Record<string, unknown>;
  /** Overall limit for start, test run and shutdown of the workbench; fails loudly past it. */
  timeoutMs?: number;
  /** Receives every log line of the run; defaults to printing it on stdout. */
  onLog?: (level: string, message: string) => void;
  /** Saves a screenshot of the workbench (test-results/screenshots/NAME.png) when the run ends. */
  screenshotName?: string;
}

/**
 * Runs an extension's test suite inside code-server's real extension host, like
 * `@vscode/test-electron`'s runTests, and resolves with the exit code VS Code reports
 * (0 when run() resolved, 1 when it threw or rejected).
 */
export async function runExtensionTests(options: ExtensionTestOptions): Promise<number> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const onLog =
    options.onLog ??
    ((level, message) => {
      process.stdout.write(`[vscode ${level}] ${message}\n`);
    });
  // A wrong path would otherwise surface only as an opaque exit code 1 from inside the workbench.
  for (const required of [path.join(options.extensionDevelopmentPath, "package.json"), options.extensionTestsPath]) {
    if (!existsSync(required)) throw new Error(`runExtensionTests: ${required} does not exist`);
  }
  const started = Date.now();
  const server = await startCodeServer({
    workspace: options.workspace,
    extensionDevelopmentPath: options.extensionDevelopmentPath,
    settings: options.settings,
  });
  // Imported lazily so that suites using only startCodeServer do not load playwright.
  const { launchChromium, screenshot } = await import("./chromium.js");
  const browser = await launchChromium().catch(async (err: unknown) => {
    await server.stop();
    throw err;
  });
  const recentLog: string[] = [];
  try {
    // Both must exist before the workbench loads: it looks them up when the tests finish.
    let reportExit!: (code: number) => void;
    const exitCode = new Promise<number>((resolve) => {
      reportExit = resolve;
    });
    await browser.page.exposeFunction("codeAutomationExit", (code: number) => reportExit(Number(code)));
    await browser.page.exposeFunction("codeAutomationLog", (level: string, message: unknown) => {
      const text = formatAutomationLog(message);
      recentLog.push(`[${level}] ${text}`);
      if (recentLog.length > 200) recentLog.shift();
      onLog(level, text);
    });
    browser.page.on("pageerror", (err) => onLog("pageerror", err.message));

    await browser.page.goto(server.workbenchUrl({ extensionTestsPath: options.extensionTestsPath }));
    const remaining = Math.max(1, timeoutMs - (Date.now() - started));
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `extension tests did not finish within ${timeoutMs} ms (${options.extensionTestsPath})\n` +
                `--- last workbench log lines ---\n${recentLog.slice(-40).join("\n")}\n` +
                `--- code-server output ---\n${server.recentOutput().slice(-4000)}`,
            ),
          ),
        remaining,
      );
    });
    try {
      return await Promise.race([exitCode, timedOut]);
    } finally {
      clearTimeout(timer);
      if (options.screenshotName) await screenshot(browser.page, options.screenshotName).catch(() => undefined);
    }
  } finally {
    await browser.close();
    await server.stop();
  }
}
