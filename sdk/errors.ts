/**
 * Typed errors of the cloud client. Every HTTP failure becomes an ApiError that keeps the
 * upstream status, code, message and request id, so callers (the studio, the CLI) can pass the
 * same status on and show the same text. Subclasses are chosen from the status in one place.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }

  static from(status: number, body: unknown, fallback: string): ApiError {
    const envelope = (body as { error?: { code?: string; message?: string; requestId?: string } } | null)?.error;
    const code = envelope?.code ?? `http_${status}`;
    const message = envelope?.message ?? fallback;
    const Class = ERROR_BY_STATUS[status] ?? (status >= 500 ? InternalServerError : ApiError);
    return new Class(status, code, message, envelope?.requestId);
  }
}

export class BadRequestError extends ApiError {}
export class AuthenticationError extends ApiError {}
export class PermissionDeniedError extends ApiError {}
export class NotFoundError extends ApiError {}
export class ConflictError extends ApiError {}
export class PayloadTooLargeError extends ApiError {}
export class RateLimitError extends ApiError {}
export class InternalServerError extends ApiError {}

const ERROR_BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitError,
};

/** The cloud could not be reached at all (no HTTP status to keep). */
export class ConnectionError extends Error {
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    // A cloud on this machine is the user's to start: say how, in every view and command that shows this.
    super(
      `cannot reach the svc cloud at ${url}: ${(cause as Error)?.message ?? cause}${isLoopbackUrl(url) ? ". Is it running? Start it with `svc cloud start`." : ""}`,
    );
    this.name = "ConnectionError";
  }
}

/** OAuth credentials and no `.svc/state.json`: svc must not guess which project to use. */
export class MissingStateError extends Error {
  constructor(readonly statePath: string) {
    super(
      `No project state at ${statePath}. You are logged in with OAuth, so svc does not create a project for you. ` +
        `Write the file by hand with your project, for example:\n` +
        `  {"orgSlug":"<org slug>","projectSlug":"<project slug>","projectId":"<project id>"}\n` +
        "(`svc whoami` lists your orgs and projects with their ids).",
    );
    this.name = "MissingStateError";
  }
}

/** Whether `url` names a cloud on this machine (the daemon `svc cloud start` runs), which the user can start. */
export function isLoopbackUrl(url: string): boolean {
  try {
    return ["127.0.0.1", "localhost", "[::1]"].includes(new URL(url).hostname);
  } catch {
    return false;
  }
}
