/**
 * A project session: the on-disk credentials and project state turned into a CloudClient, with
 * the spec's semantics (SPEC.md section 2, "Project state"):
 * - no state file → the deployments list is empty without any upstream call;
 * - the state file is created lazily by the first call that needs a scope, for anonymous
 *   credentials only; with OAuth credentials that call fails with MissingStateError.
 */
import { CloudClient } from "./client.js";
import { CredentialManager } from "./credentialManager.js";
import { writeCredentials, type Credentials } from "./credentials.js";
import { resolveCloudUrl } from "./daemon.js";
import { MissingStateError } from "./errors.js";
import { projectStatePath } from "./paths.js";
import { readProjectState, writeProjectState, type ProjectState } from "./state.js";
import type { Deployment } from "./wire.js";
import path from "node:path";

export interface SessionOptions {
  projectDir: string;
  /** Mint anonymous credentials when the credentials file is absent (default true). */
  mintAnonymous?: boolean;
  /** Where to mint them: default SVC_CLOUD_URL, else the local daemon (started if needed). */
  cloudUrl?: string;
  /** Credentials the caller has just read (saves reading the file again on a hot path). */
  credentials?: Credentials;
}

export class ProjectSession {
  private constructor(
    readonly projectDir: string,
    private readonly credentials: Credentials,
    private readonly manager: CredentialManager,
  ) {}

  static async open(options: SessionOptions): Promise<ProjectSession> {
    const manager = CredentialManager.for();
    let credentials = options.credentials ?? (await manager.read());
    if (!credentials) {
      if (options.mintAnonymous === false) throw new Error("no credentials: run `svc login`, or let svc create anonymous credentials");
      credentials = await mintAnonymousCredentials(options.cloudUrl);
    }
    return new ProjectSession(path.resolve(options.projectDir), credentials, manager);
  }

  get cloudUrl(): string {
    return this.credentials.cloudUrl;
  }
  get credentialKind(): Credentials["kind"] {
    return this.credentials.kind;
  }

  /** A client with no project scope (for /v1/me, models, jobs by id). Tokens come from, and refresh through, the credential manager. */
  client(projectId?: string): CloudClient {
    return new CloudClient({
      baseUrl: this.credentials.cloudUrl,
      projectId,
      token: () => this.manager.accessToken(),
      refreshToken: this.credentials.kind === "oauth" ? (rejected) => this.manager.refresh(rejected) : undefined,
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
}

/** Creates anonymous credentials against the cloud (starting the local daemon if needed). */
export async function mintAnonymousCredentials(configuredCloudUrl?: string): Promise<Credentials> {
  const cloudUrl = await resolveCloudUrl(configuredCloudUrl);
  const { token } = await CloudClient.createAnonymousToken(cloudUrl);
  const credentials: Credentials = { kind: "anonymous", cloudUrl, token };
  await writeCredentials(credentials);
  return credentials;
}
