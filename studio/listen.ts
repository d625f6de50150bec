/** Listening on the studio's port, or the next free one (DESIGN.md section 2: 7860, next free port if taken). */
import type { FastifyInstance } from "fastify";
import { StudioError } from "./errors.js";

const PORTS_TO_TRY = 20;

export async function listenOnFreePort(app: FastifyInstance, options: { host: string; port: number; strict: boolean }): Promise<number> {
  const attempts = options.port === 0 || options.strict ? 1 : PORTS_TO_TRY;
  for (let i = 0; i < attempts; i++) {
    const port = options.port === 0 ? 0 : options.port + i;
    try {
      await app.listen({ host: options.host, port });
      return (app.server.address() as { port: number }).port;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    }
  }
  const range = attempts === 1 ? `${options.port}` : `${options.port}-${options.port + attempts - 1}`;
  throw new StudioError(500, "port_in_use", `port ${range} on ${options.host} is in use; pass --port to choose another`);
}
