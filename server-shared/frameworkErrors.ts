/**
 * Failures answered before any route runs, in the listener's own error envelope, so a client sees
 * one shape for every failure (Fastify's defaults answer `{"error":"Bad Request","statusCode"}`):
 * - requests Node's HTTP parser refuses (malformed, headers or URL too large, a body that does not
 *   arrive in time): `clientErrorHandler`, which has only the socket;
 * - URLs the router refuses (a bad percent-encoding, a path parameter past its length limit: 414):
 *   `frameworkErrors`;
 * - Fastify's own body errors (invalid JSON, too large, wrong content type), mapped by
 *   `fastifyBodyError` for the error handlers of the control plane and the studio, which share its words.
 * The cloud's control plane and the studio use `{"error":{"code","message","requestId"}}`, the edge OpenAI's.
 */
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";
import type { FastifyError, FastifyReply, FastifyRequest, FastifyServerOptions } from "fastify";

export type ErrorEnvelope = (status: number, code: string, message: string, requestId: string) => unknown;

export interface FrameworkFailure {
  status: number;
  code: string;
  message: string;
}

/** The header both servers name each request's id in. */
export const REQUEST_ID_HEADER = "x-request-id";

/** Status, code and message for a Node `clientError`. */
function describeClientError(err: NodeJS.ErrnoException): FrameworkFailure {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, code: "request_timeout", message: "the request was not received in time" };
  if (err.code === "HPE_HEADER_OVERFLOW") return { status: 431, code: "headers_too_large", message: "the request line and headers are too large" };
  return { status: 400, code: "malformed_request", message: `the request is not valid HTTP (${err.code ?? "parse error"})` };
}

/** `clientErrorHandler`: the parser's refusals in `envelope`, with a fresh request id (there is no request to take one from). */
export function clientErrorResponder(envelope: ErrorEnvelope, newRequestId: () => string) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (err.code === "ECONNRESET" || socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, code, message } = describeClientError(err);
    const id = newRequestId();
    const body = JSON.stringify(envelope(status, code, message, id));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\n${REQUEST_ID_HEADER}: ${id}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
}

/** Status, code and message for an error the router raises before it picks a route. */
function describeRouterError(err: FastifyError): FrameworkFailure {
  if (err.code === "FST_ERR_MAX_PARAM_LENGTH") return { status: 414, code: "url_too_long", message: "a path segment of the URL is too long" };
  if (err.code === "FST_ERR_BAD_URL") return { status: 400, code: "invalid_url", message: "the URL's path is not valid percent-encoding" };
  return { status: 500, code: "internal_error", message: "internal error" };
}

/** `frameworkErrors`: the router's refusals in `envelope` (no hook has run: the request id header is set here). */
export function routerErrorResponder(envelope: ErrorEnvelope): NonNullable<FastifyServerOptions["frameworkErrors"]> {
  return (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const { status, code, message } = describeRouterError(err);
    void reply
      .status(status)
      .header(REQUEST_ID_HEADER, request.id)
      .send(envelope(status, code, message, request.id));
  };
}

/** The answer to Fastify's own request-body errors, or undefined for any other error. */
export function fastifyBodyError(err: unknown): FrameworkFailure | undefined {
  const fe = err as Partial<FastifyError>;
  if (fe?.code === "FST_ERR_CTP_BODY_TOO_LARGE") return { status: 413, code: "payload_too_large", message: fe.message ?? "request body is too large" };
  if (fe?.code === "FST_ERR_CTP_INVALID_MEDIA_TYPE") return { status: 415, code: "unsupported_media_type", message: fe.message ?? "unsupported media type" };
  if (fe?.code === "FST_ERR_CTP_EMPTY_JSON_BODY" || fe?.code === "FST_ERR_CTP_INVALID_JSON_BODY" || err instanceof SyntaxError) {
    return { status: 400, code: "invalid_json", message: "request body is not valid JSON" };
  }
  return undefined;
}
