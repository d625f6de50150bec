/**
 * The one typed error of the control plane. Handlers throw HttpError; `errorHandler.ts` maps it to the wire
 * envelope `{"error":{"code","message","requestId"}}`.
 */

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string, code = "invalid_request") => new HttpError(400, code, message);
export const unauthorized = (message = "missing or invalid bearer token") => new HttpError(401, "unauthorized", message);
export const forbidden = (message: string) => new HttpError(403, "forbidden", message);
export const notFound = (what: string) => new HttpError(404, "not_found", `${what} not found`);
export const conflict = (code: string, message: string) => new HttpError(409, code, message);
