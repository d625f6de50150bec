/**
 * A model export for the job page's Export (`GET /api/jobs/:id/merged-model`): `svc export` runs as a
 * child in the project (the merge never runs in the studio, which may be VS Code's extension host)
 * into a private temporary folder. A merged GGUF is sent as the file the CLI wrote; an Ollama folder
 * or LM Studio's layout as a zip of what the CLI wrote, paths kept, so unzipping it gives the CLI's
 * result. The folder is removed whether the client took it all or went away. Ollama's `ollama
 * create` is left to the user (the UI says how): it belongs on the machine the files are saved to.
 */
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import { contentDisposition } from "../sdk/api/files.js";
import type { MergedExportChoice } from "../sdk/api/jobs.js";
import { crc32, storedZip, storedZipSize, type ZipEntry } from "../server-shared/storedZip.js";
import type { StudioContext } from "./context.js";
import { StudioError } from "./errors.js";
import type { ExportProgressBoard } from "./exportProgress.js";
import { firstErrorLine, runSvcToEnd } from "./svcCommand.js";

// A merge of a large base takes minutes; the bound only stops a child that hangs.
const EXPORT_TIMEOUT_MS = 2 * 60 * 60 * 1000;

export async function sendMergedModel(
  ctx: Pick<StudioContext, "svcCommand" | "projectDir" | "childEnv"> & { exports: ExportProgressBoard },
  jobId: string,
  choice: MergedExportChoice & { exportId?: string },
  reply: FastifyReply,
): Promise<void> {
  const format = choice.format ?? "gguf-merged";
  const progress = choice.exportId;
  if (progress) ctx.exports.start(progress, "starting svc export");
  const dir = await mkdtemp(path.join(os.tmpdir(), "svc-studio-export-"));
  // Where the CLI writes: the file's folder (gguf-merged), the Ollama folder, or LM Studio's models folder.
  const out = format === "gguf-merged" ? dir : path.join(dir, format);
  let sending = false;
  try {
    const args = [
      "export",
      jobId,
      "--format",
      format,
      ...(choice.quant === undefined ? [] : ["--quant", choice.quant]),
      "--out",
      out,
      // The row's own adapter: without --checkpoint, svc export would take the job's best.
      "--checkpoint",
      choice.step === undefined ? "final" : String(choice.step),
      ...(format === "ollama" ? ["--no-create"] : []),
    ];
    const output = await runSvcToEnd(ctx.svcCommand, args, ctx.projectDir, ctx.childEnv, {
      timeoutMs: EXPORT_TIMEOUT_MS,
      stdoutLimit: 1 << 20,
      onStderr: progress ? (text) => ctx.exports.output(progress, text) : undefined,
    });
    if (output.kind === "failed") throw new StudioError(500, "export_failed", output.error);
    if (output.code !== 0) {
      const message = firstErrorLine(output.stderr) ?? `svc export exited with ${output.code}`;
      // The CLI's own words; a job or checkpoint that does not exist stays a 404 as the cloud said.
      const status = output.code === 2 ? 400 : /\bnot found\b|\bhas no\b|no such job/i.test(message) ? 404 : 500;
      throw new StudioError(status, status === 404 ? "not_found" : status === 400 ? "invalid_request" : "export_failed", message);
    }
    const files = await filesUnder(out);
    const model = files.find((file) => file.endsWith(".gguf") && !file.endsWith("-lora.gguf"));
    if (!model) throw new StudioError(500, "export_failed", "svc export wrote no model file");
    const sent = format === "gguf-merged" ? await singleFile(path.join(out, model)) : await zipOf(out, files, zipName(format, files, model));
    if (progress) ctx.exports.stage(progress, `sending ${sent.name}`);
    reply
      .header("content-type", sent.type)
      .header("content-length", String(sent.size))
      .header("content-disposition", contentDisposition(sent.name))
      .header("cache-control", "private, no-store")
      .header("x-content-type-options", "nosniff");
    const body = sent.body();
    body.once("close", () => {
      if (progress) ctx.exports.end(progress);
      void rm(dir, { recursive: true, force: true });
    });
    sending = true;
    return reply.send(body);
  } finally {
    if (!sending) {
      if (progress) ctx.exports.end(progress);
      await rm(dir, { recursive: true, force: true });
    }
  }
}

interface SentFile {
  name: string;
  type: string;
  size: number;
  body(): Readable;
}

async function singleFile(file: string): Promise<SentFile> {
  const { size } = await stat(file);
  return { name: path.basename(file), type: "application/octet-stream", size, body: () => createReadStream(file) };
}

/**
 * The zip's name, after the CLI's own names: `<job>[-step-N]-ollama.zip` as its Ollama folder, and the
 * merged file's name for LM Studio (`<job>[-step-N]-<quant>-lmstudio.zip`).
 */
function zipName(format: "ollama" | "lmstudio", files: string[], model: string): string {
  if (format === "lmstudio") return `${path.basename(model, ".gguf")}-lmstudio.zip`;
  const lora = files.map((file) => path.basename(file)).find((file) => file.endsWith("-lora.gguf")) ?? "model-lora.gguf";
  return `${lora.replace(/-lora\.gguf$/, "").replace(/-adapter$/, "")}-ollama.zip`;
}

/** A folder's files as a stored zip, each under its path inside the folder; each read once now for its CRC-32. */
async function zipOf(folder: string, files: string[], name: string): Promise<SentFile> {
  const entries: ZipEntry[] = [];
  for (const relative of files) {
    const file = path.join(folder, relative);
    const { size, mtime } = await stat(file);
    let crc = 0;
    for await (const chunk of createReadStream(file)) crc = crc32(chunk as Buffer, crc);
    entries.push({ name: relative.split(path.sep).join("/"), size, crc32: crc, modified: mtime, open: () => createReadStream(file) });
  }
  return { name, type: "application/zip", size: storedZipSize(entries), body: () => Readable.from(storedZip(entries)) };
}

/** Every file under `folder`, as paths relative to it, sorted. */
async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(folder, path.join(entry.parentPath ?? entry.path, entry.name)))
    .sort();
}
