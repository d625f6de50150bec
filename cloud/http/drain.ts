/**
 * Reading what is left of a refused request body. Fastify refuses a body over its limit from the
 * content-length header alone, before reading it; answering then and closing the connection
 * while the client is still writing makes the client fail with EPIPE / "fetch failed" instead of
 * reading the 413. Draining first (up to a cap, so a huge upload cannot hold the connection) lets
 * every client see the answer, as nginx's lingering close does.
 */
import type { IncomingMessage } from "node:http";

/** Bytes of a refused body read and discarded before answering; beyond this the connection closes. */
export const DRAIN_LIMIT_BYTES = 64 * 2 ** 20;

export function drainRequestBody(raw: IncomingMessage, limit = DRAIN_LIMIT_BYTES): Promise<void> {
  return new Promise((resolve) => {
    if (raw.readableEnded || raw.destroyed) return resolve();
    let seen = 0;
    const finish = () => {
      raw.off("data", onData);
      raw.off("end", finish);
      raw.off("error", finish);
      raw.off("close", finish);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limit) finish();
    };
    raw.on("data", onData);
    raw.once("end", finish);
    raw.once("error", finish);
    raw.once("close", finish);
    raw.resume();
  });
}
