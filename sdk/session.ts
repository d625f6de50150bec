/**
 * A project session: the on-disk credentials and project state turned into a CloudClient, with
 * the spec's semantics (SPEC.md section 2, "Project state"):
 * - no state file → the deployments list is empty without any upstream call;
 * - the state file is created lazily by the first call that needs a scope, for anonymous
 *   credentials only; with OAuth credentials that call fails with MissingStateError.
 */
import { CloudClient } from "./client.js";
import { readCredentials, writeCredentials, type Credentials } from "./credentials.js";
import { resolveCloudUrl } from "./daemon.js";
import { MissingStateError } from "./errors.js";
import { projectStatePath } from "./paths.js";
import { readProjectState, writeProjectState, type ProjectState } from "./state.js";
import { refreshOAuthTokens } from "./oauth.js";
import type { Deployment } from "./wire.js";
import path from "node:path";

export interface SessionOptions {
  projectDir: string;
  /** Mint anonymous credentials when the credentials file is absent (default true). */
  mintAnonymous?: boolean;
  /** Credentials the caller has just read (saves reading the file again on a hot path). */
  credentials?: Credentials;
}

export class ProjectSession {
  private constructor(
    readonly projectDir: string,
    private credentials: Credentials,
  ) {}

  static async open(options: SessionOptions): Promise<ProjectSession> {
    let credentials = options.credentials ?? (await readCredentials());
    if (!credentials) {
      if (options.mintAnonymous === false) throw new Error("no credentials: run `svc login`, or let svc create anonymous credentials");
      credentials = await mintAnonymousCredentials();
    }
    return new ProjectSession(path.resolve(options.projectDir), credentials);
  }

  get cloudUrl(): string {
    return this.credentials.cloudUrl;
  }
  get credentialKind(): Credentials["kind"] {
    return this.credentials.kind;
  }

  /** A client with no project scope (for /v1/me, models, jobs by id). */
  client(projectId?: string): CloudClient {
    const creds = this.credentials;
    return new CloudClient({
      baseUrl: creds.cloudUrl,
      projectId,
      token: async () => currentToken(this.credentials),
      refreshToken: creds.kind === "oauth" ? () => this.refresh() : undefined,
    });
  }

  state(): Promise<ProjectState | null> {
    return readProjectState(this.projectDir);
  }

  /** The project scope, creating it (anonymous only) when `.svc/state.json` is absent. */
  async requireScope(): Promise<ProjectState> {
    const existing = await this.state();
    if (existing) return existing;
    if (this.credentials.kind === "oauth") throw new MissingStateError(projectStatePath(this.projectDir));
    const client = this.client();
    const project = await client.createProject({ name: path.basename(this.projectDir) || "project" });
    const state: ProjectState = { orgSlug: project.orgSlug, projectSlug: project.slug, projectId: project.id };
    await writeProjectState(this.projectDir, state);
    return state;
  }

  /** A client scoped to the project, creating the scope lazily when allowed. */
  async scopedClient(): Promise<CloudClient> {
    return this.client((await this.requireScope()).projectId);
  }

  /** Empty without any upstream call when the project has no state yet. */
  async listDeployments(): Promise<Deployment[]> {
    const state = await this.state();
    return state ? this.client(state.projectId).listDeployments() : [];
  }

  private async refresh(): Promise<string | null> {
    if (this.credentials.kind !== "oauth") return null;
    const fresh = await refreshOAuthTokens(this.credentials);
    if (!fresh) return null;
    this.credentials = fresh;
    await writeCredentials(fresh);
    return fresh.accessToken;
  }
}

/** Creates anonymous credentials against the cloud (starting the local daemon if needed). */
export async function mintAnonymousCredentials(): Promise<Credentials> {
  const cloudUrl = await resolveCloudUrl();
  const { token } = await CloudClient.createAnonymousToken(cloudUrl);
  const credentials: Credentials = { kind: "anonymous", cloudUrl, token };
  await writeCredentials(credentials);
  return credentials;
}

function currentToken(credentials: Credentials): string {
  return credentials.kind === "anonymous" ? credentials.token : credentials.accessToken;
}
