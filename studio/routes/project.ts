/**
 * The project's own routes: the trainer manifest, training runs, base models, credentials and
 * Playground chat.
 */
import type { FastifyInstance } from "fastify";
import type { StudioContext } from "../context.js";
import { StudioError } from "../errors.js";
import { cloudChatBody } from "../chatBody.js";
import { localhostSubdomainsResolve } from "../localhostNames.js";
import { readManifest } from "../manifest.js";
import { RUN_ID_HEADER, type StudioEnvironment } from "../../sdk/studioWire.js";
import { relayStream } from "../relay.js";

export function registerProjectRoutes(app: FastifyInstance, ctx: StudioContext): void {
  app.get("/api/manifest", async () => readManifest(ctx.svcCommand, ctx.projectDir, ctx.childEnv));

  app.post("/api/train", async (_request, reply) => {
    const res = reply.raw;
    // Throws 409 (a run in flight) or 500 (the CLI cannot start) before any byte is sent, so the
    // error handler still writes the envelope. The run outlives this request (trainingRun.ts).
    const run = await ctx.training.start({
      write: (chunk) => {
        if (!res.destroyed) res.write(chunk);
      },
      end: () => {
        if (!res.destroyed) res.end();
      },
    });
    // Synchronously after start() resolved: the child's output events cannot fire before this.
    reply.hijack();
    res.writeHead(200, {
      // The body is svc start's raw output only; how it ended is asked from GET /api/train by this id.
      [RUN_ID_HEADER]: run.id,
      "content-type": "text/plain; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      "x-content-type-options": "nosniff", // browsers hand out chunks at once instead of sniffing
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
  });

  /** Facts about the studio's machine the UI cannot learn itself (a browser resolves `*.localhost` on its own). */
  app.get("/api/environment", async (): Promise<StudioEnvironment> => ({ localhostSubdomainsResolve: await localhostSubdomainsResolve() }));

  /** Whether a run is in flight (any tab, any panel may have started it) and how the last run ended. */
  app.get("/api/train", async () => ctx.training.status());

  /**
   * Stop: ends the run in flight, whichever tab or panel started it, the way Ctrl-C does (SIGTERM:
   * `svc start` cancels its job, or the job it is about to create), and answers once it exited,
   * with the status that says how. With no run in flight there is nothing to do: the same answer.
   */
  app.delete("/api/train", async () => {
    await ctx.training.stop();
    return ctx.training.status();
  });

  app.get("/api/models", async () => (await ctx.sessions.open()).client().listModels());

  const credentials = async () => ctx.sessions.describe();
  app.get("/api/credentials", credentials);
  app.post("/api/credentials", credentials);

  app.post<{ Body: Record<string, unknown> }>("/api/inference/chat", { schema: { body: { type: "object", required: ["target", "messages"] } } }, async (request, reply) => {
    const session = await ctx.sessions.open();
    const target = request.body.target as { kind?: unknown } | undefined;
    if (typeof target !== "object" || target === null) throw new StudioError(400, "invalid_request", "target must be an object");
    // Base-model inference needs a project scope (created lazily, SPEC section 2); adapters and
    // checkpoints are found through their job, with the scope added when there is one.
    const scope = target.kind === "base_model" ? await session.requireScope() : await session.state();
    const abort = new AbortController();
    const client = session.client(scope?.projectId);
    const upstream = await client.openInferenceChat(cloudChatBody(request.body), abort.signal);
    await relayStream(request, reply, upstream, abort);
  });
}
