/**
 * Answers with a file to save (a route that `produces: "file"`): its type, exact length and name
 * (Content-Disposition, sdk/api/files.ts), and its bytes streamed as they are read, with the
 * socket's backpressure (Fastify pipes the stream), so a download costs a chunk of memory, not the file.
 */
import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import { contentDisposition } from "../../sdk/api/files.js";

export interface FileAnswer {
  name: string;
  type: string;
  size: number;
  body(): AsyncIterable<Uint8Array>;
}

export function sendFile(reply: FastifyReply, file: FileAnswer): FastifyReply {
  reply
    .header("content-type", file.type)
    .header("content-length", String(file.size))
    .header("content-disposition", contentDisposition(file.name))
    // Private bytes of one project: no shared cache may keep them.
    .header("cache-control", "private, no-store")
    .header("x-content-type-options", "nosniff");
  return reply.send(Readable.from(file.body(), { objectMode: false }));
}
