/**
 * The one owner of OAuth token refreshes for a credentials file. Access tokens are short-lived and each refresh
 * rotates the refresh token; the cloud treats a replayed (already rotated) refresh token as theft and revokes the
 * sign-in. So a refresh must happen once, however many requests see the token expire:
 * - within a process, a refresh in flight is shared (single-flight) by every caller;
 * - across processes (the CLI, the studio, the extension host), the file is locked and re-read before refreshing:
 *   a token newer than the one the server rejected is used as is;
 * - tokens are refreshed ahead of `expiresAt`, so most requests never meet a 401.
 */
import { readCredentials, writeCredentials, type Credentials, type OAuthCredentials } from "./credentials.js";
import { withFileLock } from "./fileLock.js";
import { refreshOAuthTokens } from "./oauth.js";
import { credentialsPath } from "./paths.js";

/** Refresh this long before the access token expires. */
const REFRESH_AHEAD_MS = 60_000;

const managers = new Map<string, CredentialManager>();

export class CredentialManager {
  private refreshing: Promise<string | null> | null = null;

  private constructor(readonly file: string) {}

  /** The process's manager of `file` (the credentials file by default): one per file, so single-flight is process-wide. */
  static for(file = credentialsPath()): CredentialManager {
    let manager = managers.get(file);
    if (!manager) managers.set(file, (manager = new CredentialManager(file)));
    return manager;
  }

  /** The credentials as they are on disk now (`svc login` / `logout` in another process show at once). */
  read(): Promise<Credentials | null> {
    return readCredentials(this.file);
  }

  /** The bearer token to send now; an OAuth token about to expire is refreshed first. */
  async accessToken(): Promise<string> {
    const credentials = await this.read();
    if (!credentials) throw new Error("no credentials: run `svc login`, or let svc create anonymous credentials");
    if (credentials.kind === "anonymous") return credentials.token;
    if (Date.parse(credentials.expiresAt) - Date.now() > REFRESH_AHEAD_MS) return credentials.accessToken;
    return (await this.refresh(credentials.accessToken)) ?? credentials.accessToken;
  }

  /**
   * A token to use instead of `rejected` (refused with a 401, or about to expire): the newer one on disk if another
   * caller refreshed meanwhile, else one refresh shared by every caller. Null when the sign-in cannot be refreshed.
   */
  refresh(rejected: string): Promise<string | null> {
    this.refreshing ??= withFileLock(this.file, () => this.refreshUnlessNewer(rejected)).finally(() => (this.refreshing = null));
    return this.refreshing;
  }

  private async refreshUnlessNewer(rejected: string): Promise<string | null> {
    const current = await this.read();
    if (!current || current.kind !== "oauth") return null;
    if (current.accessToken !== rejected) return current.accessToken;
    const fresh: OAuthCredentials | null = await refreshOAuthTokens(current);
    if (!fresh) return null;
    await writeCredentials(fresh, this.file);
    return fresh.accessToken;
  }
}
