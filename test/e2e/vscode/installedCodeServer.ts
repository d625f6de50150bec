/**
 * A clean code-server with an extension installed from a VSIX the way a user installs it
 * (`--install-extension` into an empty extensions dir), with no extension development path.
 */
import { startCodeServer } from "../../support/code-server.js";

export interface InstalledCodeServer {
  url: string;
  baseUrl: string;
  /** Folder names under the extensions dir after the install (`svc.svc-studio-0.1.0`). */
  installed: string[];
  stop(): Promise<void>;
}

export async function startWithInstalledVsix(options: { vsix: string; workspace: string; settings: Record<string, unknown> }): Promise<InstalledCodeServer> {
  const server = await startCodeServer({
    workspace: options.workspace,
    installVsix: options.vsix,
    // No forwarded-port toasts over the workbench in screenshots.
    settings: { "remote.autoForwardPorts": false, ...options.settings },
  });
  return { url: server.url, baseUrl: server.baseUrl, installed: server.installedExtensions, stop: () => server.stop() };
}
