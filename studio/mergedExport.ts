/**
 * A merged model for the job page's Export (`GET /api/jobs/:id/merged-model`): `svc export --format
 * gguf-merged` runs as a child in the project (the merge never runs in the studio, which may be VS
 * Code's extension host) into a private temporary folder; the file is then sent under the name the
 * CLI gave it, and the folder removed, whether the client took it all or went away.
 */
import { createReadStream } from "node:fs";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { FastifyReply } from "fastify";
import { contentDisposition } from "../sdk/api/files.js";
import type { MergedExportChoice } from "../sdk/api/jobs.js";
import type { StudioContext } from "./context.js";
import { StudioError } from "./errors.js";
import { firstErrorLine, runSvcToEnd } from "./svcCommand.js";

// A merge of a large base takes minutes; the bound only stops a child that hangs.
const EXPORT_TIMEOUT_MS = 2 * 60 * 60 * 1000;

export async function sendMergedModel(
  ctx: Pick<StudioContext, "svcCommand" | "projectDir" | "childEnv">,
  jobId: string,
  choice: MergedExportChoice,
  reply: FastifyReply,
): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "svc-studio-export-"));
  let sending = false;
  try {
    const args = [
      "export",
      jobId,
      "--format",
      "gguf-merged",
      "--quant",
      choice.quant,
      "--out",
      dir,
      // The row's own adapter: without --checkpoint, svc export would take the job's best.
      "--checkpoint",
      choice.step === undefined ? "final" : String(choice.step),
    ];
    const output = await runSvcToEnd(ctx.svcCommand, args, ctx.projectDir, ctx.childEnv, { timeoutMs: EXPORT_TIMEOUT_MS, stdoutLimit: 1 << 20 });
    if (output.kind === "failed") throw new StudioError(500, "export_failed", output.error);
    if (output.code !== 0) {
      const message = firstErrorLine(output.stderr) ?? `svc export exited with ${output.code}`;
      // The CLI's own words; a job or checkpoint that does not exist stays a 404 as the cloud said.
      const status = output.code === 2 ? 400 : /\bnot found\b|\bhas no\b|no such job/i.test(message) ? 404 : 500;
      throw new StudioError(status, status === 404 ? "not_found" : status === 400 ? "invalid_request" : "export_failed", message);
    }
    const [name] = (await readdir(dir)).filter((file) => file.endsWith(".gguf"));
    if (!name) throw new StudioError(500, "export_failed", "svc export wrote no model file");
    const file = path.join(dir, name);
    const { size } = await stat(file);
    reply
      .header("content-type", "application/octet-stream")
      .header("content-length", String(size))
      .header("content-disposition", contentDisposition(name))
      .header("cache-control", "private, no-store")
      .header("x-content-type-options", "nosniff");
    const body = createReadStream(file);
    body.once("close", () => void rm(dir, { recursive: true, force: true }));
    sending = true;
    return reply.send(body);
  } finally {
    if (!sending) await rm(dir, { recursive: true, force: true });
  }
}
