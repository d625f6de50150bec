/**
 * The project's own routes: the trainer manifest, the dataset preview, training runs, base models,
 * credentials and Playground chat.
 */
import type { StudioContext, StudioHandlers } from "../context.js";
import { cloudChatBody } from "../chatBody.js";
import { localhostSubdomainsResolve } from "../localhostNames.js";
import { readManifest } from "../manifest.js";
import { changedBuildSources } from "../../sdk/buildFreshness.js";
import { RUN_ID_HEADER } from "../../sdk/api/studio.js";
import { relayStream } from "../relay.js";

type ProjectRoutes =
  | "getManifest"
  | "getBuildStatus"
  | "rebuild"
  | "getDatasetPreview"
  | "getEnvironment"
  | "getTrainingStatus"
  | "stopTraining"
  | "getCredentials"
  | "ensureCredentials"
  | "listModels"
  | "listWorkers"
  | "train"
  | "chat";

export function projectHandlers(ctx: StudioContext): Pick<StudioHandlers, ProjectRoutes> {
  return {
    getManifest: () => readManifest(ctx.svcCommand, ctx.projectDir, ctx.childEnv),
    getBuildStatus: async () => ({ changed: changedBuildSources(ctx.projectDir) ?? [] }),
    rebuild: () => readManifest(ctx.svcCommand, ctx.projectDir, ctx.childEnv, { rebuild: true }),
    /** The datasets as a dry run reads them, in a subprocess (datasetPreview.ts): the Datasets view, before a run. */
    getDatasetPreview: () => ctx.datasetPreviews.read(),
    /** Facts about the studio's machine the UI cannot learn itself (a browser resolves `*.localhost` on its own). */
    getEnvironment: async () => ({ localhostSubdomainsResolve: await localhostSubdomainsResolve() }),
    /** Whether a run is in flight (any tab, any panel may have started it) and how the last run ended. */
    getTrainingStatus: async () => ctx.training.status(),
    /**
     * Stop: ends the run in flight, whichever tab or panel started it, the way Ctrl-C does (a drain request:
     * `svc start` cancels its job, or the job it is about to create), and answers once it exited,
     * with the status that says how. With no run in flight there is nothing to do: the same answer.
     */
    stopTraining: async () => {
      await ctx.training.stop();
      return ctx.training.status();
    },
    getCredentials: () => ctx.sessions.describe(),
    ensureCredentials: () => ctx.sessions.describe(),
    listModels: async () => (await ctx.sessions.open()).client().listModels(),
    listWorkers: async () => (await ctx.sessions.open()).client().listWorkers(),

    train: async (_request, reply) => {
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
    },

    chat: async (request, reply) => {
      const session = await ctx.sessions.open();
      // Base-model inference needs a project scope (created lazily, SPEC section 2); adapters and
      // checkpoints are found through their job, with the scope added when there is one.
      const scope = request.body.target.kind === "base_model" ? await session.requireScope() : await session.state();
      const abort = new AbortController();
      const client = session.client(scope?.projectId);
      const upstream = await client.openInferenceChat(cloudChatBody(request.body), abort.signal);
      await relayStream(request, reply, upstream, abort);
    },
  };
}
