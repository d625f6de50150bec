import { Type } from "@sinclair/typebox";
import type { CloudContext } from "../context.js";
import { listModels, registerModel } from "../domain/models.js";
import { requireUser, requireWorker } from "../http/auth.js";
import type { App } from "./types.js";

const RegisterModelBody = Type.Object({
  // Optional for a GGUF: the cloud names it after its general.name (or file name).
  name: Type.Optional(Type.String({ pattern: "^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$", errorMessage: "name must be 1-80 characters of letters, digits, '.', '_', ':' and '-'" })),
  path: Type.Optional(Type.String({ minLength: 1 })),
  upstreamUrl: Type.Optional(Type.String({ minLength: 1 })),
  adapterModel: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  replace: Type.Optional(Type.Boolean()),
});

export function modelRoutes(app: App, ctx: CloudContext): void {
  app.get("/v1/models", async (request) => {
    await requireUser(ctx, request);
    return listModels(ctx);
  });

  // Registering a model names files on the cloud's machine, so it takes the machine (worker) token
  // that only someone with access to the data dir can read.
  app.post("/v1/models", { schema: { body: RegisterModelBody } }, async (request, reply) => {
    await requireWorker(ctx, request);
    return reply.status(201).send(await registerModel(ctx, request.body));
  });
}
