/**
 * Registers the base models shipped inside the package (svc-tiny) on every start, with the facts
 * of their GGUF header, and fills in the facts of rows registered before facts were stored (the
 * one start-up pass over base models, so serve.ts keeps a single call).
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { inspectGguf } from "../engine/gguf/inspect.js";
import { packageRoot } from "../sdk/packageRoot.js";
import type { CloudContext } from "./context.js";
import { factColumns, fillMissingModelFacts } from "./domain/models.js";
import { fileSha256 } from "./domain/fileSha256.js";
import { nowIso } from "./domain/ids.js";

export const BUILTIN_MODELS = [{ name: "svc-tiny", file: "models/svc-tiny.gguf" }];

export async function registerBuiltinModels(ctx: CloudContext): Promise<void> {
  for (const model of BUILTIN_MODELS) {
    const file = path.join(packageRoot(), model.file);
    if (!existsSync(file)) continue;
    // The package's own file: if its header cannot be read the install is broken, so say so at start.
    const facts = factColumns(await inspectGguf(file));
    const sha256 = await fileSha256(file); // a few MB: cheap, and an upgrade may have changed it
    await ctx.db
      .insertInto("base_models")
      .values({ name: model.name, source: "gguf", path: file, upstream_url: null, adapter_model: null, created_at: nowIso(), ...facts, sha256 })
      // The package may have moved (reinstall, upgrade): the row follows the file.
      .onConflict((oc) => oc.column("name").doUpdateSet({ path: file, ...facts, sha256 }))
      .execute();
  }
  await fillMissingModelFacts(ctx);
}
