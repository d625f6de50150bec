/** Registers the base models shipped inside the package (svc-tiny) on every start. */
import { existsSync } from "node:fs";
import path from "node:path";
import { packageRoot } from "../sdk/packageRoot.js";
import type { CloudContext } from "./context.js";
import { nowIso } from "./domain/ids.js";

export const BUILTIN_MODELS = [{ name: "svc-tiny", file: "models/svc-tiny.gguf", trainable: true }];

export async function registerBuiltinModels(ctx: CloudContext): Promise<void> {
  for (const model of BUILTIN_MODELS) {
    const file = path.join(packageRoot(), model.file);
    if (!existsSync(file)) continue;
    await ctx.db
      .insertInto("base_models")
      .values({ name: model.name, source: "gguf", path: file, upstream_url: null, adapter_model: null, trainable: model.trainable ? 1 : 0, created_at: nowIso() })
      .onConflict((oc) => oc.column("name").doUpdateSet({ path: file }))
      .execute();
  }
}
