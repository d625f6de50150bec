/**
 * One ProjectSession per launch (per sign-in): it is kept while the credentials file names the same kind and cloud,
 * and replaced when `svc login` / `svc logout` change them while the studio runs. Tokens are read and refreshed by the
 * process-wide CredentialManager, so parallel requests after an access token expires cause one refresh, not one each.
 * Minting anonymous credentials is single-flight: the SPA fires several requests at mount, and parallel mints would
 * each write a different anonymous user, leaving `.svc/state.json` pointing at a project the final credentials cannot see.
 */
import { readCredentials, type Credentials } from "../sdk/credentials.js";
import { ProjectSession } from "../sdk/session.js";
import type { CloudClient } from "../sdk/client.js";
import { readProjectState } from "../sdk/state.js";

export class SessionSource {
  private minting: Promise<ProjectSession> | null = null;
  private session: ProjectSession | null = null;

  /** `cloudUrl`: the configured cloud for minting credentials (else SVC_CLOUD_URL, else the local daemon). */
  constructor(
    readonly projectDir: string,
    private readonly cloudUrl?: string,
  ) {}

  /** `known`: the credentials file as the caller just read it (null: absent), to not read it twice. */
  async open(known?: Credentials | null): Promise<ProjectSession> {
    if (this.minting) return this.minting;
    const credentials = known === undefined ? await readCredentials() : known;
    if (credentials) {
      const kept = this.session;
      if (kept && kept.credentialKind === credentials.kind && kept.cloudUrl === credentials.cloudUrl) return kept;
      return (this.session = await ProjectSession.open({ projectDir: this.projectDir, mintAnonymous: false, credentials }));
    }
    this.minting ??= ProjectSession.open({ projectDir: this.projectDir, cloudUrl: this.cloudUrl })
      .then((session) => (this.session = session))
      .finally(() => (this.minting = null));
    return this.minting;
  }

  /**
   * A client scoped to the project's existing state, or null when `.svc/state.json` is absent.
   * The state is read before any session opens: with no scope there is nothing to list, so no
   * upstream call may happen, not even minting anonymous credentials (SPEC section 2).
   */
  async existingProjectClient(): Promise<CloudClient | null> {
    // Both files at once (reading is no upstream call); `/api/jobs` runs this on every request.
    const [state, credentials] = await Promise.all([readProjectState(this.projectDir), readCredentials()]);
    if (!state) return null;
    return (await this.open(credentials)).client(state.projectId);
  }

  /** A client scoped to the project when there is one: jobs and deployments by id need no scope. */
  async clientFor(): Promise<CloudClient> {
    const session = await this.open();
    return session.client((await session.state())?.projectId);
  }

  /** `GET|POST /api/credentials`: which credentials are in use, minting anonymous ones if none exist. Never the token. */
  async describe(): Promise<{ kind: Credentials["kind"]; cloudUrl: string; minted: boolean }> {
    const existed = (await readCredentials()) !== null;
    const session = await this.open();
    return { kind: session.credentialKind, cloudUrl: session.cloudUrl, minted: !existed };
  }
}
