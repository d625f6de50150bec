/** Base models: GGUF files served by llama.cpp, or OpenAI-compatible upstream servers. */
import { open } from "node:fs/promises";
import path from "node:path";
import type { BaseModel } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { badRequest, conflict } from "../http/errors.js";
import type { BaseModelsTable } from "../store/schema.js";
import { nowIso } from "./ids.js";

export interface RegisterModelInput {
  name: string;
  /** Absolute path of a GGUF file on the cloud's machine. */
  path?: string;
  /** Base URL of an OpenAI-compatible server, e.g. http://gpu-box:8000/v1. */
  upstreamUrl?: string;
  /** Model name to send upstream (e.g. the vLLM LoRA module name). */
  adapterModel?: string;
  replace?: boolean;
}

export async function listModels(ctx: CloudContext): Promise<BaseModel[]> {
  const rows = await ctx.db.selectFrom("base_models").selectAll().orderBy("created_at").orderBy("name").execute();
  return rows.map(toModel);
}

export async function registerModel(ctx: CloudContext, input: RegisterModelInput): Promise<BaseModel> {
  if (Boolean(input.path) === Boolean(input.upstreamUrl)) throw badRequest("give exactly one of path (a GGUF file) or upstreamUrl");
  if (input.path) await assertGguf(input.path);
  if (input.upstreamUrl && !/^https?:\/\/[^/]+/.test(input.upstreamUrl)) throw badRequest("upstreamUrl must be an http(s) URL");
  const existing = await ctx.db.selectFrom("base_models").select("name").where("name", "=", input.name).executeTakeFirst();
  if (existing && !input.replace) throw conflict("model_exists", `a base model named "${input.name}" already exists`);
  const row: BaseModelsTable = {
    name: input.name,
    source: input.path ? "gguf" : "upstream",
    path: input.path ? path.resolve(input.path) : null,
    upstream_url: input.upstreamUrl?.replace(/\/+$/, "") ?? null,
    adapter_model: input.adapterModel ?? null,
    // Only svc's own model family can be trained: the engine knows its architecture and vocabulary.
    trainable: 0,
    created_at: nowIso(),
  };
  await ctx.db.deleteFrom("base_models").where("name", "=", input.name).execute();
  await ctx.db.insertInto("base_models").values(row).execute();
  return toModel(row);
}

async function assertGguf(file: string): Promise<void> {
  let handle;
  try {
    handle = await open(file, "r");
  } catch {
    throw badRequest(`path: cannot read ${file}`);
  }
  try {
    const magic = Buffer.alloc(4);
    await handle.read(magic, 0, 4, 0);
    if (magic.toString("latin1") !== "GGUF") throw badRequest(`path: ${file} is not a GGUF file`);
  } finally {
    await handle.close();
  }
}

function toModel(row: BaseModelsTable): BaseModel {
  return { name: row.name, source: row.source as BaseModel["source"], trainable: Boolean(Number(row.trainable)), createdAt: row.created_at };
}
