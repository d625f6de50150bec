/**
 * Opens a ProjectSession per request, so credentials written by `svc login` / `svc logout` while
 * the studio runs are picked up at once. Minting anonymous credentials is single-flight: the SPA
 * fires several requests at mount, and parallel mints would each write a different anonymous
 * user, leaving `.svc/state.json` pointing at a project the final credentials cannot see.
 */
import { readCredentials, type Credentials } from "../sdk/credentials.js";
import { ProjectSession } from "../sdk/session.js";
import type { CloudClient } from "../sdk/client.js";
import { readProjectState } from "../sdk/state.js";

export class SessionSource {
  private minting: Promise<ProjectSession> | null = null;

  constructor(readonly projectDir: string) {}

  /** `known`: the credentials file as the caller just read it (null: absent), to not read it twice. */
  async open(known?: Credentials | null): Promise<ProjectSession> {
    if (this.minting) return this.minting;
    const credentials = known === undefined ? await readCredentials() : known;
    if (credentials) return ProjectSession.open({ projectDir: this.projectDir, mintAnonymous: false, credentials });
    this.minting ??= ProjectSession.open({ projectDir: this.projectDir }).finally(() => (this.minting = null));
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

  /** `GET|POST /api/credentials`: which credentials are in use, minting anonymous ones if none exist. Never the token. */
  async describe(): Promise<{ kind: Credentials["kind"]; cloudUrl: string; minted: boolean }> {
    const existed = (await readCredentials()) !== null;
    const session = await this.open();
    return { kind: session.credentialKind, cloudUrl: session.cloudUrl, minted: !existed };
  }
}
