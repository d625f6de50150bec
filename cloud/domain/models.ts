/**
 * Base models: GGUF files served by llama.cpp (and trained, for the llama / qwen2 / qwen3
 * architectures), or OpenAI-compatible upstream servers. A GGUF's facts (architecture, size,
 * quantization, context, trainable) are read from its header once, at registration, and stored,
 * so lists and pickers never open model files.
 */
import { constants } from "node:fs";
import { access, mkdir } from "node:fs/promises";
import path from "node:path";
import { inspectGguf, type ModelFacts } from "../../engine/gguf/inspect.js";
import type { BaseModel } from "../../sdk/wire.js";
import type { RegisterModelInput } from "../../sdk/api/models.js";
import type { CloudContext } from "../context.js";
import { badRequest, conflict } from "../http/errors.js";
import type { BaseModelsTable } from "../store/schema.js";
import { fileSha256 } from "./fileSha256.js";
import { hfFolderManifest } from "./hfFolderManifest.js";
import { nowIso } from "./ids.js";

/** What a model name may look like (the route's schema says the same to clients). */
export const MODEL_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,79}$/;

export const UPSTREAM_NOT_TRAINABLE = "an OpenAI-compatible upstream server: svc trains local GGUF files only";

export async function listModels(ctx: CloudContext): Promise<BaseModel[]> {
  const rows = await ctx.db.selectFrom("base_models").selectAll().orderBy("created_at").orderBy("name").execute();
  return rows.map(toModel);
}

export async function findModel(ctx: CloudContext, name: string): Promise<BaseModel | undefined> {
  const row = await ctx.db.selectFrom("base_models").selectAll().where("name", "=", name).executeTakeFirst();
  return row && toModel(row);
}

export async function registerModel(ctx: CloudContext, input: RegisterModelInput): Promise<BaseModel> {
  if (Boolean(input.path) === Boolean(input.upstreamUrl)) throw badRequest("give exactly one of path (a GGUF file) or upstreamUrl");
  if (input.upstreamUrl && !/^https?:\/\/[^/]+/.test(input.upstreamUrl)) throw badRequest("upstreamUrl must be an http(s) URL");
  if (input.loraDir && !input.upstreamUrl) throw badRequest("loraDir: only a vLLM upstream (upstreamUrl) loads adapters from a folder");
  if (input.loraDir && !path.isAbsolute(input.loraDir)) throw badRequest("loraDir must be an absolute folder on the cloud's machine");
  if (input.loraDirOnServer && !input.loraDir) throw badRequest("loraDirOnServer needs loraDir");
  if (input.hfFolder && !input.path) throw badRequest("hfFolder: only a GGUF (path) converted from it can name its Hugging Face folder");
  if (input.hfFolder) await readableHfFolder(input.hfFolder);
  // Everything that can fail on the file happens before the database is touched.
  const file = input.path ? path.resolve(input.path) : null;
  const facts = file ? await readFacts(file) : null;
  // Workers cache the base by this, so a replaced file reaches them as new content.
  const sha256 = file ? await fileSha256(file) : null;
  const name = input.name ?? (file && facts ? defaultModelName(facts, file) : undefined);
  if (!name) throw badRequest("name: an upstream model needs a name");
  if (!MODEL_NAME_PATTERN.test(name)) throw badRequest("name must be 1-80 characters of letters, digits, '.', '_', ':' and '-'");
  const row: BaseModelsTable = {
    name,
    source: file ? "gguf" : "upstream",
    path: file,
    upstream_url: input.upstreamUrl?.replace(/\/+$/, "") ?? null,
    adapter_model: input.adapterModel ?? null,
    created_at: nowIso(),
    ...(facts ? factColumns(facts) : upstreamColumns()),
    sha256,
    lora_dir: input.loraDir ? path.resolve(input.loraDir) : null,
    lora_dir_on_server: input.loraDirOnServer ?? null,
    hf_folder: input.hfFolder ? path.resolve(input.hfFolder) : null,
  };
  if (row.lora_dir) await usableLoraDir(row.lora_dir);
  // One transaction: a replace never leaves the name missing, and two racing registrations of
  // the same new name end with one row and one 409.
  await ctx.db.transaction().execute(async (trx) => {
    const existing = await trx.selectFrom("base_models").select(["name", "created_at"]).where("name", "=", name).executeTakeFirst();
    if (existing && !input.replace) throw conflict("model_exists", `a base model named "${name}" already exists (pass replace to overwrite it)`);
    if (existing) {
      // A replaced model keeps its place in the lists.
      row.created_at = existing.created_at;
      await trx.deleteFrom("base_models").where("name", "=", name).execute();
    }
    await trx.insertInto("base_models").values(row).execute();
  });
  // The edge caches which backend serves each deployment; a replaced model may change it.
  ctx.deploymentChanges.changedAll();
  // Hashed now, in the background, so the first assignment to a remote worker does not wait for it.
  if (row.hf_folder) void hfFolderManifest(row.hf_folder);
  return toModel(row);
}

/**
 * The stored sha256 of a GGUF model's file, computed and stored first if the row predates it
 * (null for an upstream model or a file that is gone: the worker then reports the missing file).
 */
export async function modelSha256(ctx: CloudContext, row: Pick<BaseModelsTable, "name" | "path" | "sha256">): Promise<string | null> {
  if (row.sha256 || !row.path) return row.sha256;
  const sha256 = await fileSha256(row.path).catch(() => null);
  if (sha256) await ctx.db.updateTable("base_models").set({ sha256 }).where("name", "=", row.name).where("path", "=", row.path).execute();
  return sha256;
}

/**
 * Reads the facts of rows stored before facts existed (or whose file could not be read then),
 * so a cloud upgraded in place lists them fully. A file that is gone stays as it was: serving it
 * reports the missing file when someone asks.
 */
export async function fillMissingModelFacts(ctx: CloudContext): Promise<void> {
  const rows = await ctx.db.selectFrom("base_models").select(["name", "path"]).where("source", "=", "gguf").where("architecture", "is", null).execute();
  for (const row of rows) {
    if (!row.path) continue;
    const facts = await inspectGguf(row.path).catch(() => null);
    if (facts) await ctx.db.updateTable("base_models").set(factColumns(facts)).where("name", "=", row.name).execute();
  }
}

/** The folder exists (or is made) and the cloud can write in it: deployments write adapters there later. */
async function usableLoraDir(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    await access(dir, constants.W_OK);
  } catch (err) {
    throw badRequest(`loraDir: the cloud cannot write in ${dir} (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
  }
}

/** An absolute folder with a config.json: the torch backend's from_pretrained reads it later. */
async function readableHfFolder(folder: string): Promise<void> {
  if (!path.isAbsolute(folder)) throw badRequest("hfFolder must be an absolute folder on the cloud's machine");
  try {
    await access(path.join(folder, "config.json"), constants.R_OK);
  } catch {
    throw badRequest(`hfFolder: ${folder} has no readable config.json`);
  }
}

/** The header facts, or a 400 naming `path` that says what is wrong with the file. */
async function readFacts(file: string): Promise<ModelFacts> {
  try {
    return await inspectGguf(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw badRequest(`path: ${file} does not exist`, "invalid_model_file");
    if (code === "EISDIR") throw badRequest(`path: ${file} is a folder, not a GGUF file`, "invalid_model_file");
    if (code === "EACCES" || code === "EPERM") throw badRequest(`path: cannot read ${file} (permission denied)`, "invalid_model_file");
    const why = err instanceof Error ? err.message : String(err);
    throw badRequest(`path: ${file} is not a usable GGUF file: ${why}`, "invalid_model_file");
  }
}

/** The columns that hold a GGUF's facts. */
export function factColumns(facts: ModelFacts): Pick<BaseModelsTable, FactColumn> {
  return {
    architecture: facts.architecture,
    parameters: facts.parameters,
    quantization: facts.quantization,
    context_length: facts.contextLength ?? null,
    size_bytes: facts.sizeBytes,
    has_chat_template: facts.hasChatTemplate ? 1 : 0,
    trainable: facts.trainable ? 1 : 0,
    not_trainable_reason: facts.trainable ? null : (facts.notTrainableReason ?? `architecture ${facts.architecture} cannot be trained`),
  };
}

type FactColumn = "architecture" | "parameters" | "quantization" | "context_length" | "size_bytes" | "has_chat_template" | "trainable" | "not_trainable_reason";

function upstreamColumns(): Pick<BaseModelsTable, FactColumn> {
  return {
    architecture: null,
    parameters: null,
    quantization: null,
    context_length: null,
    size_bytes: null,
    has_chat_template: null,
    trainable: 0,
    not_trainable_reason: UPSTREAM_NOT_TRAINABLE,
  };
}

/** "Qwen3 0.6B" → "qwen3-0.6b"; a file name when the GGUF has no general.name. */
export function defaultModelName(facts: Pick<ModelFacts, "name">, file: string): string {
  return slugModelName(facts.name ?? "") || slugModelName(path.basename(file).replace(/\.gguf$/i, "")) || "model";
}

/** Lower-case, runs of anything outside [a-z0-9._:] become one "-", at most 80 characters. */
export function slugModelName(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9._:]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 80)
    .replace(/[-.:_]+$/, "");
}

const toNumber = (value: number | string | null): number | null => (value === null || value === undefined ? null : Number(value));

export function toModel(row: BaseModelsTable): BaseModel {
  const trainable = Boolean(Number(row.trainable));
  return {
    name: row.name,
    source: row.source as BaseModel["source"],
    trainable,
    notTrainableReason: trainable
      ? null
      : (row.not_trainable_reason ?? (row.source === "upstream" ? UPSTREAM_NOT_TRAINABLE : "its GGUF header has not been read")),
    architecture: row.architecture ?? null,
    parameters: toNumber(row.parameters),
    quantization: row.quantization ?? null,
    contextLength: toNumber(row.context_length),
    sizeBytes: toNumber(row.size_bytes),
    hasChatTemplate: row.has_chat_template === null || row.has_chat_template === undefined ? null : Boolean(Number(row.has_chat_template)),
    ...(row.lora_dir ? { loraDir: { cloud: row.lora_dir, server: row.lora_dir_on_server ?? row.lora_dir } } : {}),
    ...(row.hf_folder ? { hfFolder: row.hf_folder } : {}),
    createdAt: row.created_at,
  };
}
