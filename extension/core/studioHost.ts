/**
 * The studio server living in the extension host (DESIGN.md sections 1 and 8), started on first
 * use rather than on activation, so activating costs nothing; stopped on deactivate. Everything the
 * extension shows goes through it over loopback with its per-launch token — the same `/api/*`
 * routes the browser SPA uses — so there is one code path to the cloud.
 */
import type { StudioOptions, StudioServer } from "../../studio/index.js";
import { HttpTransport } from "../../ui-shared/studioHttpClient.js";
import type { StudioEndpoint } from "./panelApi.js";
import type { SvcCommand } from "./svcCli.js";

export type CreateStudioServer = (options: StudioOptions) => Promise<StudioServer>;

export interface StudioHostOptions {
  projectDir: string;
  svcCommand: SvcCommand;
  /** First port to try (`svc.studio.port`); the next free one is used when taken. */
  port: number;
  /** `svc.cloud.url`; undefined for the local daemon. */
  cloudUrl?: string;
  /** The built webviews (`dist/webview`), served to the browser by "Open Studio in Browser". */
  assetsDir: string;
  /** Loads the studio module; injected so the heavy module loads only when the studio starts. */
  load: () => Promise<CreateStudioServer>;
}

export class StudioHost {
  private starting: Promise<StudioServer> | undefined;
  private server: StudioServer | undefined;

  constructor(private readonly options: StudioHostOptions) {}

  /** Whether the server is up (for tests and the status of "Open in Browser"). */
  get running(): boolean {
    return this.server !== undefined;
  }

  /** The running studio, starting it on first call; concurrent callers share one start. */
  async endpoint(): Promise<StudioEndpoint> {
    const server = await this.start();
    return { url: server.url, token: server.token, api: new HttpTransport(server.token, server.url) };
  }

  /** Lets the studio answer requests forwarded to it under another authority (asExternalUri). */
  async allowHost(hostAndPort: string): Promise<void> {
    (await this.start()).allowHost(hostAndPort);
  }

  private start(): Promise<StudioServer> {
    this.starting ??= (async () => {
      const create = await this.options.load();
      const server = await create({
        projectDir: this.options.projectDir,
        host: "127.0.0.1",
        port: this.options.port,
        cloudUrl: this.options.cloudUrl,
        svcCommand: this.options.svcCommand,
        assetsDir: this.options.assetsDir,
      });
      this.server = server;
      return server;
    })();
    // A failed start (port range taken, bad assets) is retried on the next call instead of cached.
    this.starting.catch(() => (this.starting = undefined));
    return this.starting;
  }

  /**
   * Mints anonymous credentials through the studio (`POST /api/credentials`). Callers make sure a
   * cloud is reachable first: otherwise the SDK would start the cloud daemon from this process.
   */
  async mintAnonymousCredentials(): Promise<void> {
    await (await this.endpoint()).api.ensureCredentials();
  }

  /** Stops a training run in flight (its job is cancelled) and the server. */
  async stop(): Promise<void> {
    const starting = this.starting;
    this.starting = undefined;
    this.server = undefined;
    const server = await starting?.catch(() => undefined);
    await server?.close();
  }
}
