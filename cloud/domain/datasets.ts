/**
 * Uploaded JSONL datasets, deduplicated by content within a project: bytes whose SHA-256 the project
 * already stores answer with that dataset (its id and first name), so `svc start` run again stores
 * nothing new. New content is validated before anything is written. The file is written under a temp
 * name and renamed into place before its row is inserted, so a row never points at a missing or
 * half-written file; a failed write or insert removes what it wrote, and a crash in between leaves
 * an orphan file, never a broken dataset.
 */
import { createHash } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import type { Dataset } from "../../sdk/wire.js";
import type { CloudContext } from "../context.js";
import { badRequest, notFound } from "../http/errors.js";
import type { DatasetsTable } from "../store/schema.js";
import { validateChatJsonlYielding } from "../../sdk/jsonl.js";
import { newId, nowIso } from "./ids.js";

/** Uploads of the same content to the same project in flight in this process: the second waits for the first's row. */
const inFlight = new Map<string, Promise<Dataset>>();

export async function saveDataset(ctx: CloudContext, projectId: string, name: string, body: Buffer): Promise<Dataset> {
  const sha256 = createHash("sha256").update(body).digest("hex");
  const key = `${projectId}:${sha256}`;
  const pending = inFlight.get(key);
  if (pending !== undefined) return pending.catch(() => saveDataset(ctx, projectId, name, body));
  const saving = findOrStore(ctx, projectId, name, body, sha256);
  inFlight.set(key, saving);
  try {
    return await saving;
  } finally {
    inFlight.delete(key);
  }
}

async function findOrStore(ctx: CloudContext, projectId: string, name: string, body: Buffer, sha256: string): Promise<Dataset> {
  const existing = await ctx.db
    .selectFrom("datasets")
    .selectAll()
    .where("project_id", "=", projectId)
    .where("sha256", "=", sha256)
    .where("size_bytes", "=", body.length)
    .orderBy("created_at")
    .limit(1)
    .executeTakeFirst();
  // Stored content was valid when stored: the same bytes need no second check.
  if (existing) return toDataset(existing);
  return storeDataset(ctx, projectId, name, body, sha256);
}

async function storeDataset(ctx: CloudContext, projectId: string, name: string, body: Buffer, sha256: string): Promise<Dataset> {
  // In slices: the same event loop serves the edge, which must not stall behind a large upload.
  const report = await validateChatJsonlYielding(body.toString("utf8"));
  if (report.errors.length > 0) throw badRequest(`dataset ${name} is invalid:\n${report.errors.join("\n")}`, "invalid_dataset");
  const id = newId();
  const dir = path.join(ctx.dataDir, "datasets");
  await fs.mkdir(dir, { recursive: true });
  const file = path.join(dir, `${id}.jsonl`);
  const row: DatasetsTable = {
    id,
    project_id: projectId,
    name,
    line_count: report.exampleCount,
    size_bytes: body.length,
    sha256,
    path: file,
    created_at: nowIso(),
  };
  try {
    await fs.writeFile(`${file}.tmp`, body);
    await fs.rename(`${file}.tmp`, file);
    await ctx.db.insertInto("datasets").values(row).execute();
  } catch (err) {
    // A full or read-only disk (or database) leaves nothing behind: no temp file, no file without its row.
    await Promise.all([fs.rm(`${file}.tmp`, { force: true }), fs.rm(file, { force: true })]).catch(() => undefined);
    throw err;
  }
  return toDataset(row);
}

export async function requireDataset(ctx: CloudContext, projectId: string, id: string, field: string): Promise<DatasetsTable> {
  const row = await ctx.db.selectFrom("datasets").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row || row.project_id !== projectId) throw badRequest(`${field}: no dataset ${id} in this project`, "unknown_dataset");
  return row;
}

export async function getDatasetFile(ctx: CloudContext, id: string): Promise<DatasetsTable> {
  const row = await ctx.db.selectFrom("datasets").selectAll().where("id", "=", id).executeTakeFirst();
  if (!row) throw notFound(`dataset ${id}`);
  return row;
}

export function toDataset(row: DatasetsTable): Dataset {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    lineCount: Number(row.line_count),
    sizeBytes: Number(row.size_bytes),
    createdAt: row.created_at,
  };
}
