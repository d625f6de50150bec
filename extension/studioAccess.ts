/**
 * Owns the one in-process studio for the workspace folder: built from the resolved CLI and the
 * settings, started lazily by the first caller, replaced when the CLI, the port or the cloud URL
 * setting changes, stopped on deactivate. The settings are read into one object (svcSettings) and
 * passed down: `svc.cloud.url` reaches the studio as its `cloudUrl` option and the `svc` children
 * as their SVC_CLOUD_URL, never through the extension host's own process.env.
 */
import { createRequire } from "node:module";
import path from "node:path";
import * as vscode from "vscode";
import type { StudioEndpoint } from "./core/panelApi.js";
import type { ResolvedCli } from "./core/svcCli.js";
import { StudioHost, type CreateStudioServer } from "./core/studioHost.js";
import { DEFAULT_STUDIO_PORT } from "../sdk/paths.js";

export class NoStudioError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "NoStudioError";
  }
}

export class StudioAccess implements vscode.Disposable {
  private host: StudioHost | undefined;
  private hostKey = "";

  constructor(private readonly extensionPath: string) {}

  /** Called whenever the folder or CLI may have changed; a different setup gets a fresh studio. */
  configure(folder: string | undefined, cli: ResolvedCli | undefined): void {
    const { port, cloudUrl } = svcSettings();
    const key = folder && cli ? JSON.stringify([folder, cli.command, port, cloudUrl]) : "";
    if (key === this.hostKey) return;
    void this.host?.stop();
    this.hostKey = key;
    this.host =
      folder && cli
        ? new StudioHost({
            projectDir: folder,
            svcCommand: cli.command,
            port,
            cloudUrl,
            assetsDir: path.join(this.extensionPath, "dist", "webview"),
            load: loadStudioModule(this.extensionPath),
          })
        : undefined;
  }

  get current(): StudioHost | undefined {
    return this.host;
  }

  /** The running studio; throws a readable error when there is no project or CLI to run it for. */
  async endpoint(): Promise<StudioEndpoint> {
    if (!this.host) throw new NoStudioError("svc is not set up in this workspace: open a folder with src/svc/index.ts and install svc (npm i -D svc-studio).");
    return this.host.endpoint();
  }

  async stop(): Promise<void> {
    const host = this.host;
    this.host = undefined;
    this.hostKey = "";
    await host?.stop();
  }

  dispose(): void {
    void this.stop();
  }
}

export interface SvcSettings {
  /** `svc.studio.port`: the first port the studio tries. */
  port: number;
  /** `svc.cloud.url`, without a trailing slash; undefined for the local daemon. */
  cloudUrl: string | undefined;
}

export function svcSettings(): SvcSettings {
  const config = vscode.workspace.getConfiguration("svc");
  const cloudUrl = config.get<string>("cloud.url", "").trim().replace(/\/+$/, "");
  return { port: config.get<number>("studio.port", DEFAULT_STUDIO_PORT), cloudUrl: cloudUrl || undefined };
}

/** The environment of an `svc` child: the extension host's, plus the configured cloud. */
export function svcChildEnv(settings: SvcSettings = svcSettings()): NodeJS.ProcessEnv {
  return settings.cloudUrl ? { ...process.env, SVC_CLOUD_URL: settings.cloudUrl } : process.env;
}

/**
 * The studio server is its own bundle beside the extension's (scripts/build-extension.mjs): it
 * pulls in Fastify and the SDK, and keeping it out of extension.cjs keeps activation cheap.
 */
function loadStudioModule(extensionPath: string): () => Promise<CreateStudioServer> {
  return async () => {
    const load = createRequire(path.join(extensionPath, "package.json"));
    return (load("./dist/extension/studio.cjs") as { createStudioServer: CreateStudioServer }).createStudioServer;
  };
}
