/**
 * The studio server (DESIGN.md section 8): a loopback Fastify app that serves the built SPA and
 * the `/api/*` routes as a thin layer over the SDK. Light enough to run inside VS Code's extension
 * host: no native modules, no user code, no esbuild — those run in `svc` subprocesses.
 *
 * @example
 * const studio = await createStudioServer({ projectDir: process.cwd(), host: "127.0.0.1" });
 * console.log(studio.url); // http://127.0.0.1:7860
 * await studio.close();
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import Fastify, { type FastifyInstance } from "fastify";
import { packageRoot } from "../sdk/packageRoot.js";
import { DEFAULT_STUDIO_PORT } from "../sdk/paths.js";
import type { StudioContext } from "./context.js";
import { installErrorHandler, studioErrorOptions } from "./errors.js";
import { installGuards } from "./guard.js";
import { listenOnFreePort } from "./listen.js";
import { deploymentHandlers } from "./routes/deployments.js";
import { jobHandlers } from "./routes/jobs.js";
import { ExportProgressBoard } from "./exportProgress.js";
import { projectHandlers } from "./routes/project.js";
import { studioApi, studioDownloads, studioStreams } from "../sdk/api/studio.js";
import { contractValidation, serveRoutes } from "../server-shared/serveRoute.js";
import { EVENT_STREAM_ROUTE } from "./guard.js";
import { SessionSource } from "./session.js";
import { registerStaticAssets } from "./staticAssets.js";
import { defaultSvcCommand, type SvcCommand } from "./svcCommand.js";
import { TrainingRunner } from "./trainingRun.js";
import { DatasetPreviews } from "./datasetPreview.js";
import { RelayedJobList } from "./relayedJobList.js";

export interface StudioOptions {
  /** The user's project: where `.svc/state.json` lives and where `svc manifest` / `svc start` run. */
  projectDir: string;
  /** Loopback only: the Host guard and the CSRF design assume nobody else can connect. */
  host: "127.0.0.1";
  /** First port to try (default 7860); taken ports are skipped unless `strictPort`. 0 = any free port. */
  port?: number;
  /** Fail instead of trying the next port when `port` is taken (for an explicit `--port`). */
  strictPort?: boolean;
  /**
   * The cloud to use (the extension's `svc.cloud.url`); default: `SVC_CLOUD_URL`, else the local daemon. Passed as
   * configuration, never written into this process's environment (it may be VS Code's extension host).
   */
  cloudUrl?: string;
  /** How to run the project's CLI; default: this package's `dist/cli.mjs` under the user's Node. */
  svcCommand?: SvcCommand;
  /** The built SPA; default: this package's `dist/webview`. */
  assetsDir?: string;
  /** The per-launch CSRF token; default: 32 random bytes. */
  token?: string;
  /** Fastify request logging (off by default: `svc dev` prints only the URL). */
  logger?: boolean;
}

export interface StudioServer {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** The CSRF token the SPA reads from its `<meta>`; VS Code webviews get it handed over. */
  token: string;
  /** Stops a training run in flight (its job is cancelled), then the server. */
  close(): Promise<void>;
  /** For in-process tests (`inject`) and embedding. */
  app: FastifyInstance;
  /**
   * Also accept requests whose Host is exactly `host:port` (for example the authority VS Code's
   * `asExternalUri` forwards the studio through). The CSRF token is still required on /api.
   */
  allowHost(hostAndPort: string): void;
}

export async function createStudioServer(options: StudioOptions): Promise<StudioServer> {
  const projectDir = path.resolve(options.projectDir);
  const token = options.token ?? randomBytes(32).toString("base64url");
  const svcCommand = options.svcCommand ?? defaultSvcCommand();
  const cloudUrl = options.cloudUrl?.trim().replace(/\/+$/, "") || undefined;
  // The `svc` children (manifest, start) get the configured cloud the way the CLI reads it.
  const childEnv = cloudUrl ? { ...process.env, SVC_CLOUD_URL: cloudUrl } : process.env;
  const ctx: StudioContext = {
    projectDir,
    svcCommand,
    childEnv,
    sessions: new SessionSource(projectDir, cloudUrl),
    training: new TrainingRunner(svcCommand, projectDir, childEnv),
    datasetPreviews: new DatasetPreviews(svcCommand, projectDir, childEnv),
    jobList: new RelayedJobList(),
    exports: new ExportProgressBoard(),
  };
  let port = 0;

  // No CORS plugin on purpose: a preflight is never answered, so cross-origin pages cannot send
  // the custom token header at all.
  const app = Fastify({ logger: options.logger ?? false, bodyLimit: 1024 * 1024, ...contractValidation, ...studioErrorOptions });
  installErrorHandler(app);
  const extraHosts = new Set<string>();
  installGuards(app, { token, port: () => port, extraHosts });
  serveRoutes(
    app,
    { ...studioApi, ...studioStreams, ...studioDownloads },
    { ...projectHandlers(ctx), ...jobHandlers(ctx), ...deploymentHandlers(ctx) },
    { jobEvents: { config: EVENT_STREAM_ROUTE } },
  );
  registerStaticAssets(app, { assetsDir: options.assetsDir ?? path.join(packageRoot(), "dist", "webview"), token });

  port = await listenOnFreePort(app, { host: options.host, port: options.port ?? DEFAULT_STUDIO_PORT, strict: options.strictPort ?? false });
  const url = `http://${options.host}:${port}`;
  return {
    url,
    port,
    token,
    app,
    allowHost(hostAndPort) {
      extraHosts.add(hostAndPort.trim().toLowerCase());
    },
    async close() {
      await ctx.training.stop();
      ctx.jobList.close();
      // Open SSE relays would otherwise keep close() waiting until the browser lets go.
      app.server.closeAllConnections();
      await app.close();
    },
  };
}
