/**
 * Opens a ProjectSession per request, so credentials written by `svc login` / `svc logout` while
 * the studio runs are picked up at once. Minting anonymous credentials is single-flight: the SPA
 * fires several requests at mount, and parallel mints would each write a different anonymous
 * user, leaving `.svc/state.json` pointing at a project the final credentials cannot see.
 */
import { readCredentials, type Credentials } from "../sdk/credentials.js";
import { ProjectSession } from "../sdk/session.js";

export class SessionSource {
  private minting: Promise<ProjectSession> | null = null;

  constructor(readonly projectDir: string) {}

  async open(): Promise<ProjectSession> {
    if (this.minting) return this.minting;
    if (await readCredentials()) return ProjectSession.open({ projectDir: this.projectDir, mintAnonymous: false });
    this.minting ??= ProjectSession.open({ projectDir: this.projectDir }).finally(() => (this.minting = null));
    return this.minting;
  }

  /** `GET|POST /api/credentials`: which credentials are in use, minting anonymous ones if none exist. Never the token. */
  async describe(): Promise<{ kind: Credentials["kind"]; cloudUrl: string; minted: boolean }> {
    const existed = (await readCredentials()) !== null;
    const session = await this.open();
    return { kind: session.credentialKind, cloudUrl: session.cloudUrl, minted: !existed };
  }
}
