import type { BaseModel } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { requireUser } from "../http/auth.js";
import type { App } from "./types.js";

export function modelRoutes(app: App, ctx: CloudContext): void {
  app.get("/v1/models", async (request): Promise<BaseModel[]> => {
    await requireUser(ctx, request);
    const rows = await ctx.db.selectFrom("base_models").selectAll().orderBy("created_at").orderBy("name").execute();
    return rows.map((r) => ({ name: r.name, source: r.source as BaseModel["source"], trainable: Boolean(Number(r.trainable)), createdAt: r.created_at }));
  });
}
