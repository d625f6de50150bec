/** Refresh, Open Studio in Browser, and the welcome view's setup actions. */
import * as vscode from "vscode";
import { shellCommandLine, shellKind } from "../../sdk/platform/shellCommand.js";
import { ensureCloudRunning } from "../core/cliRun.js";
import type { Services } from "../services.js";
import { svcChildEnv } from "../studioAccess.js";
import { setupProblem } from "./setup.js";

export async function refresh(s: Services): Promise<void> {
  await s.project.refresh();
  await Promise.all([s.jobs.refresh(), s.endpoints.refresh()]);
}

/**
 * Opens the studio's SPA in the user's browser. `asExternalUri` makes the loopback URL reachable
 * from where the browser is (a forwarded port over Remote-SSH or code-server).
 */
export async function openStudioInBrowser(s: Services): Promise<vscode.Uri | undefined> {
  const problem = setupProblem(s.project.state);
  if (problem) {
    void s.prompts.error(problem);
    return undefined;
  }
  const { url } = await s.studio.endpoint();
  const external = await vscode.env.asExternalUri(vscode.Uri.parse(`${url}/`));
  // Behind a forwarded port or code-server's proxy, requests arrive with the forwarder's Host;
  // the studio refuses unknown hosts (DNS-rebinding guard), so it is told about this one.
  if (external.authority !== vscode.Uri.parse(url).authority) await s.studio.current?.allowHost(external.authority);
  await vscode.env.openExternal(external);
  return external;
}

/** Runs a shell command in a visible terminal in the workspace folder (the user sees and owns it). */
function runInTerminal(s: Services, name: string, command: string): vscode.Terminal {
  const terminal = vscode.window.createTerminal({ name, cwd: s.project.folder });
  terminal.show();
  terminal.sendText(command);
  return terminal;
}

/** The welcome view's "Install svc": the workspace's own copy, so its native modules are built for the user's Node. */
export function installCli(s: Services): vscode.Terminal {
  const terminal = runInTerminal(s, "svc: install", "npm i -D svc-studio");
  // The file watcher notices node_modules/.bin/svc; this catches installs the watcher misses.
  const closed = vscode.window.onDidCloseTerminal((t) => {
    if (t !== terminal) return;
    closed.dispose();
    void refresh(s);
  });
  return terminal;
}

/** `svc <subcommand>` as the integrated terminal's shell reads it (PowerShell needs `&` before a quoted program). */
function svcCommandLine(s: Services, subcommand: string): string {
  if (!s.project.cli) return `npx svc ${subcommand}`;
  return shellCommandLine([...s.project.cli.command, subcommand], shellKind(vscode.env.shell));
}

export function initProject(s: Services): vscode.Terminal {
  return runInTerminal(s, "svc: init", svcCommandLine(s, "init"));
}

export function signIn(s: Services): vscode.Terminal {
  return runInTerminal(s, "svc: login", svcCommandLine(s, "login"));
}

/**
 * Creates anonymous credentials (the browser studio does the same on first load). The cloud is
 * started first through the CLI, under the user's Node: minting with no cloud would make the SDK
 * start the daemon from inside the extension host.
 */
export async function continueAnonymously(s: Services): Promise<void> {
  const cli = s.project.cli;
  const folder = s.project.folder;
  if (!cli || !folder) {
    void s.prompts.error(setupProblem(s.project.state) ?? "svc is not set up in this workspace.");
    return;
  }
  await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: "svc: Connecting to the cloud" }, async () => {
    await ensureCloudRunning(cli.command, folder, svcChildEnv());
    await s.studio.current?.mintAnonymousCredentials();
  });
  await refresh(s);
}
