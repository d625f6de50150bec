/**
 * A job's adapter as a file to download (`GET /v1/jobs/:id/adapter`): the final adapter or a
 * checkpoint's, as the GGUF llama.cpp loads or as PEFT's pair zipped. The artifacts are found by the
 * names the worker uploads them under (cloud/workers/trainerWorker.ts); their bytes are read from
 * the data dir when the response is written, never held whole in memory.
 */
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import path from "node:path";
import { adapterArtifactNames, type AdapterChoice } from "../../sdk/api/jobs.js";
import type { CloudContext } from "../context.js";
import { HttpError } from "../http/errors.js";
import { crc32, storedZip, storedZipSize, type ZipEntry } from "../../server-shared/storedZip.js";
import type { JobsTable } from "../store/schema.js";

/** The names inside a PEFT folder: what `PeftModel.from_pretrained(dir)` reads (the final adapter's artifact names). */
const PEFT = adapterArtifactNames();

/**
 * The saved file's name: the job's name (made safe for any file system), its short id (two runs of
 * one trainer share a name), which adapter, and the format: `quickstart-1a2b3c4d-step-20.gguf`,
 * `quickstart-1a2b3c4d-adapter-peft.zip`.
 */
export function adapterDownloadName(job: { id: string; name: string }, choice: AdapterChoice): string {
  const which = choice.step === undefined ? "adapter" : `step-${choice.step}`;
  return `${jobFileStem(job)}-${which}${choice.format === "gguf" ? ".gguf" : "-peft.zip"}`;
}

/** The job's name made safe for any file system, with its short id: `quickstart-1a2b3c4d`. */
export function jobFileStem(job: { id: string; name: string }): string {
  const name =
    job.name
      .normalize("NFKD")
      .replace(/[\u0300-\u036f]/g, "")
      .replace(/[^\w.-]+/g, "-")
      .replace(/^[-.]+|[-.]+$/g, "")
      .slice(0, 60) || "job";
  return `${name}-${job.id.slice(0, 8)}`;
}

export interface AdapterDownload {
  name: string;
  type: string;
  size: number;
  /** The bytes, read from disk as they are sent. */
  body(): AsyncIterable<Uint8Array>;
}

/** The download for a job already known to be in the caller's scope; 404 naming what is missing. */
export async function adapterDownload(ctx: CloudContext, job: JobsTable, choice: AdapterChoice): Promise<AdapterDownload> {
  const names = adapterArtifactNames(choice.step);
  const wanted = choice.format === "gguf" ? [names.gguf] : [names.weights, names.config];
  const rows = await ctx.db.selectFrom("artifacts").select(["name", "path"]).where("job_id", "=", job.id).where("name", "in", wanted).execute();
  const which = choice.step === undefined ? "final adapter" : `checkpoint at step ${choice.step}`;
  if (!rows.some((row) => row.name === (choice.format === "gguf" ? names.gguf : names.weights))) {
    // Say why when it can be said: a job that has not completed has no final adapter yet.
    const reason = choice.step === undefined && job.status !== "completed" ? ` (the job is ${job.status})` : "";
    throw new HttpError(404, "not_found", `job ${job.id} has no ${which}${reason}`);
  }
  const pathOf = (name: string) => {
    const row = rows.find((r) => r.name === name);
    if (!row) throw new HttpError(404, "not_found", `job ${job.id} has a ${which} but no ${name}: it was trained before svc wrote PEFT files`);
    return row.path;
  };
  const name = adapterDownloadName({ id: job.id, name: job.name }, choice);
  if (choice.format === "gguf") {
    const file = pathOf(names.gguf);
    const { size } = await statArtifact(file);
    return { name, type: "application/octet-stream", size, body: () => createReadStream(file) };
  }
  const entries = await Promise.all(
    [
      [PEFT.weights, pathOf(names.weights)],
      [PEFT.config, pathOf(names.config)],
    ].map(([entryName, file]) => zipEntryOf(entryName, file)),
  );
  return { name, type: "application/zip", size: storedZipSize(entries), body: () => storedZip(entries) };
}

/** The job's base model GGUF, named by its file name; 404 when the model is gone or served by an upstream server. */
export async function baseModelDownload(ctx: CloudContext, job: JobsTable): Promise<AdapterDownload> {
  const modelName = String((JSON.parse(job.config) as { model?: unknown }).model ?? "");
  const row = await ctx.db.selectFrom("base_models").select(["path"]).where("name", "=", modelName).executeTakeFirst();
  if (!row) throw new HttpError(404, "not_found", `job ${job.id}'s base model ${modelName} is no longer registered`);
  if (!row.path) throw new HttpError(404, "not_found", `job ${job.id}'s base model ${modelName} is an upstream server, not a GGUF file`);
  const file = row.path;
  const { size } = await statArtifact(file);
  return { name: path.basename(file), type: "application/octet-stream", size, body: () => createReadStream(file) };
}

/** An artifact file as a zip entry: its CRC-32 from one read now, its bytes from a second read when the archive reaches it. */
async function zipEntryOf(name: string, file: string): Promise<ZipEntry> {
  const { size, mtime } = await statArtifact(file);
  let crc = 0;
  for await (const chunk of createReadStream(file)) crc = crc32(chunk as Buffer, crc);
  return { name, size, crc32: crc, modified: mtime, open: () => createReadStream(file) };
}

async function statArtifact(file: string) {
  try {
    return await stat(file);
  } catch {
    // The row says it was uploaded: a file gone from the data dir is the cloud's fault, not the caller's.
    throw new HttpError(500, "artifact_missing", `an artifact file is missing from the cloud's data dir: ${file}`);
  }
}
