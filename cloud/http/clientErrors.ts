/**
 * Requests Node's HTTP parser refuses before Fastify routes them (malformed, headers too large,
 * a body that does not arrive in time) are answered in the listener's own error envelope, so a
 * client sees the same shape for every failure. Fastify's default answers `{"error":"Bad Request"}`.
 */
import { STATUS_CODES } from "node:http";
import type { Socket } from "node:net";

export type ErrorEnvelope = (status: number, code: string, message: string) => unknown;

/** Status, code and message for a Node `clientError`. */
function describe(err: NodeJS.ErrnoException): { status: number; code: string; message: string } {
  if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") return { status: 408, code: "request_timeout", message: "the request was not received in time" };
  if (err.code === "HPE_HEADER_OVERFLOW") return { status: 431, code: "headers_too_large", message: "the request line and headers are too large" };
  return { status: 400, code: "malformed_request", message: `the request is not valid HTTP (${err.code ?? "parse error"})` };
}

export function clientErrorResponder(envelope: ErrorEnvelope) {
  return (err: NodeJS.ErrnoException, socket: Socket): void => {
    // A reset connection has nobody left to answer.
    if (err.code === "ECONNRESET" || socket.destroyed || !socket.writable) {
      socket.destroy();
      return;
    }
    const { status, code, message } = describe(err);
    const body = JSON.stringify(envelope(status, code, message));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\n` +
        `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
    );
  };
}
