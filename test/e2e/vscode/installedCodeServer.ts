/**
 * A clean code-server with an extension installed from a VSIX the way a user installs it
 * (`--install-extension` into an empty extensions dir), with no extension development path.
 * test/support/code-server.ts covers the development-host case; this is the packaged case.
 */
import { execFile as execFileCb } from "node:child_process";
import { mkdir, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { codeServerBinary } from "../../support/code-server.js";
import { freePort } from "../../support/ports.js";
import { spawnProcess, waitForUrl } from "../../support/processes.js";
import { createTempDir } from "../../support/tmp.js";

const execFile = promisify(execFileCb);

export interface InstalledCodeServer {
  url: string;
  baseUrl: string;
  /** Folder names under the extensions dir after the install (`svc.svc-0.1.0`). */
  installed: string[];
  stop(): Promise<void>;
}

export async function startWithInstalledVsix(options: { vsix: string; workspace: string; settings: Record<string, unknown> }): Promise<InstalledCodeServer> {
  const bin = await codeServerBinary();
  const home = await createTempDir("code-server-vsix");
  const userDataDir = path.join(home.path, "user-data");
  const extensionsDir = path.join(home.path, "extensions");
  await mkdir(path.join(userDataDir, "User"), { recursive: true });
  await mkdir(extensionsDir, { recursive: true });
  await writeFile(
    path.join(userDataDir, "User", "settings.json"),
    JSON.stringify({ "workbench.startupEditor": "none", "security.workspace.trust.enabled": false, "remote.autoForwardPorts": false, ...options.settings }),
  );
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CONFIG_HOME: path.join(home.path, "xdg-config"), XDG_DATA_HOME: path.join(home.path, "xdg-data") };
  for (const key of Object.keys(env)) if (key.startsWith("VSCODE_") || key === "ELECTRON_RUN_AS_NODE") delete env[key];
  await execFile(bin, ["--user-data-dir", userDataDir, "--extensions-dir", extensionsDir, "--install-extension", options.vsix], { env, maxBuffer: 8 * 1024 * 1024 });
  const installed = (await readdir(extensionsDir)).filter((name) => !name.startsWith("."));
  const port = await freePort();
  const proc = spawnProcess(
    bin,
    ["--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--user-data-dir", userDataDir, "--extensions-dir", extensionsDir, "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", "--disable-getting-started-override", options.workspace],
    { env, name: "code-server-vsix" },
  );
  const baseUrl = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await proc.stop();
    await home.remove();
  };
  try {
    await waitForUrl(`${baseUrl}/healthz`, { process: proc, timeoutMs: 30_000 });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `${baseUrl}/?folder=${encodeURIComponent(options.workspace)}`, baseUrl, installed, stop };
}
