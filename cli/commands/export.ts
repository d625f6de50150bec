/**
 * `svc export JOB`: a job's adapter taken where people run models. The adapter and the base GGUF
 * come from the cloud (`GET /v1/jobs/:id/adapter`, `GET /v1/jobs/:id/base-model`); the merge runs
 * here, on the machine the files are for (engine/gguf/merge-lora.ts, pure TypeScript: no compiler,
 * no Python). Everything is written under a temporary name beside the target and renamed into
 * place at the end, so a failure leaves nothing half-written.
 */
import { bestSavedStep } from "./exportBestStep.js";
import { execFile } from "node:child_process";
import { createWriteStream, existsSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { jobFileStem } from "../../cloud/domain/adapterDownload.js";
import { mergeLora, type MergedWeightType } from "../../engine/gguf/merge-lora.js";
import { readGgufHeader } from "../../engine/gguf/reader.js";
import { fileNameOf } from "../../sdk/api/files.js";
import type { CloudClient } from "../../sdk/client.js";
import { formatBytes } from "../../sdk/modelFacts.js";
import { ProjectSession } from "../../sdk/session.js";
import type { Job } from "../../sdk/wire.js";
import { type Command, parse } from "../command.js";
import { listed } from "../commandSummaries.js";
import { ollamaModelfile } from "../export/ollamaModelfile.js";
import { CliError } from "../output.js";

const FORMATS = ["gguf-merged", "ollama", "lmstudio", "peft"] as const;
const QUANTS = ["q8_0", "q4_k_m", "f16"] as const;
type ExportFormat = (typeof FORMATS)[number];
type Quant = (typeof QUANTS)[number];

const USAGE = `svc export JOB-ID --format gguf-merged|ollama|lmstudio|peft [--checkpoint STEP] [--quant q8_0|q4_k_m|f16] [--out PATH] [--no-create]

gguf-merged  the base model with the adapter merged in, as one GGUF llama.cpp loads without an adapter
             (--out: the file, or a folder for it; default ./<job>-<id>-<quant>.gguf)
ollama       a folder with a Modelfile (FROM the base GGUF, ADAPTER the adapter GGUF, the chat template
             and stop tokens) and both files; runs \`ollama create\` when ollama is on PATH
             (--out: the folder; default ./<job>-<id>-ollama)
lmstudio     the merged GGUF in LM Studio's models folder: <models>/svc/<job>-<id>/<file>.gguf
             (--out: the models folder; default ~/.lmstudio/models)
peft         the adapter as PEFT's pair (adapter_model.safetensors, adapter_config.json), zipped
             (--out: the file; default ./<job>-<id>-adapter-peft.zip)

--checkpoint STEP  the checkpoint saved at STEP, or "final" (default: the best saved adapter, by the job's eval metric)
--quant            the merged model's weights: q8_0 (default), f16, or q4_k_m (needs llama.cpp's
                   llama-quantize on PATH, or its path in SVC_LLAMA_QUANTIZE)
--no-create        ollama: write the folder only, without running ollama create`;

export const exportCommand: Command = {
  ...listed("export"),
  usage: USAGE,
  async run(argv) {
    const { values, positionals } = parse(
      argv,
      { format: { type: "string" }, quant: { type: "string" }, checkpoint: { type: "string" }, out: { type: "string" }, "no-create": { type: "boolean" } },
      USAGE,
    );
    if (values.help) {
      process.stdout.write(USAGE + "\n");
      return 0;
    }
    const [jobId, extra] = positionals;
    if (!jobId) throw new CliError(`svc export needs a job id (svc jobs list shows them)\nusage: ${USAGE.split("\n")[0]}`, 2);
    if (extra !== undefined) throw new CliError(`unexpected argument "${extra}"\nusage: ${USAGE.split("\n")[0]}`, 2);
    const options = exportOptions(values);
    options.create = values["no-create"] !== true;
    const quantize = options.quant === "q4_k_m" ? llamaQuantize() : undefined;
    const client = await projectClient();
    const job = await client.getJob(jobId);
    if (options.step === undefined && !options.final) {
      options.step = await bestSavedStep(client, job);
      if (options.step !== undefined) progressLine(`the checkpoint at step ${options.step} is the job's best; --checkpoint chooses another`);
    }
    await exportJob(client, job, options, quantize);
    return 0;
  },
};

interface ExportOptions {
  format: ExportFormat;
  quant: Quant;
  step?: number;
  /** --checkpoint final: the final adapter, not the best. */
  final?: boolean;
  out?: string;
  /** ollama: run `ollama create` when Ollama is installed (not for the studio's export, which the user runs where they unzip it). */
  create?: boolean;
}

function exportOptions(values: { format?: string; quant?: string; checkpoint?: string; out?: string }): ExportOptions {
  const format = values.format as ExportFormat | undefined;
  if (!format) throw new CliError(`svc export needs --format (${FORMATS.join(", ")})`, 2);
  if (!FORMATS.includes(format)) throw new CliError(`unknown format "${format}": use ${FORMATS.join(", ")}`, 2);
  const quant = (values.quant ?? "q8_0") as Quant;
  if (!QUANTS.includes(quant)) throw new CliError(`unknown quantisation "${values.quant}": use ${QUANTS.join(", ")}`, 2);
  if (values.quant !== undefined && (format === "peft" || format === "ollama")) {
    throw new CliError(`--quant applies to the merged formats (gguf-merged, lmstudio); ${format} keeps the base model as it is`, 2);
  }
  let step: number | undefined;
  // "final": the final adapter even where a checkpoint scored better (the job page's Final adapter row).
  if (values.checkpoint === "final") return { format, quant, final: true, out: values.out };
  if (values.checkpoint !== undefined) {
    step = Number(values.checkpoint);
    if (!/^\d+$/.test(values.checkpoint) || !Number.isSafeInteger(step))
      throw new CliError('--checkpoint must be a step number (the job page lists its checkpoints) or "final"', 2);
  }
  return { format, quant, step, out: values.out };
}

/** llama.cpp's quantizer for K-quants, found before anything is downloaded. */
function llamaQuantize(): string {
  const named = process.env.SVC_LLAMA_QUANTIZE;
  if (named) {
    if (!existsSync(named)) throw new CliError(`SVC_LLAMA_QUANTIZE names ${named}, which does not exist`);
    return named;
  }
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    for (const name of process.platform === "win32" ? ["llama-quantize.exe"] : ["llama-quantize"]) {
      if (dir && existsSync(path.join(dir, name))) return path.join(dir, name);
    }
  }
  throw new CliError(
    "--quant q4_k_m needs llama.cpp's llama-quantize (on PATH, or its path in SVC_LLAMA_QUANTIZE): build it from llama.cpp with cmake and a C/C++ compiler " +
      "(cmake -B build && cmake --build build --target llama-quantize), or install llama.cpp; q8_0 and f16 need nothing more",
  );
}

async function projectClient(): Promise<CloudClient> {
  const session = await ProjectSession.open({ projectDir: process.cwd() });
  const state = await session.state();
  return session.client(state?.projectId);
}

const progressLine = (text: string) => process.stderr.write(`${text}\n`);

/** Streams a download to `file`, reporting each tenth of it. */
async function download(response: Response, file: string, what: string): Promise<number> {
  const total = Number(response.headers.get("content-length") ?? 0);
  progressLine(`downloading ${what}${total ? ` (${formatBytes(total)})` : ""}`);
  let received = 0;
  let reported = 0;
  const body = Readable.fromWeb(response.body as never);
  body.on("data", (chunk: Buffer) => {
    received += chunk.length;
    const tenth = total ? Math.floor((received / total) * 10) : 0;
    if (tenth > reported && tenth < 10) {
      reported = tenth;
      progressLine(`  ${what}: ${tenth * 10}%`);
    }
  });
  await pipeline(body, createWriteStream(file));
  return received;
}

/** Reports merge progress by tenths of the tensors. */
function mergeProgress(what: string) {
  let reported = 0;
  return ({ done, total }: { done: number; total: number }) => {
    const tenth = Math.floor((done / total) * 10);
    if (tenth > reported) {
      reported = tenth;
      progressLine(`  ${what}: ${tenth * 10}% of ${total} tensors`);
    }
  };
}

async function exportJob(client: CloudClient, job: Job, options: ExportOptions, quantizer: string | undefined): Promise<void> {
  const stem = jobFileStem(job);
  const which = options.step === undefined ? "the final adapter" : `the checkpoint at step ${options.step}`;
  if (options.format === "peft") {
    const response = await client.openJobAdapter(job.id, { format: "peft", step: options.step });
    const target = path.resolve(options.out ?? fileNameOf(response.headers.get("content-disposition")) ?? `${stem}-adapter-peft.zip`);
    await writeAtomically(target, (temp) => download(response, temp, `${which} (PEFT)`));
    return done(target);
  }

  // Open the adapter first: a job without one fails before the (large) base model is fetched.
  const adapterResponse = await client.openJobAdapter(job.id, { format: "gguf", step: options.step });
  const which2 = options.step === undefined ? "adapter" : `step-${options.step}`;
  const targets = targetsOf(options, stem, which2);
  await mkdir(targets.parent, { recursive: true });
  const work = await mkdtemp(path.join(targets.parent, `.svc-export-`));
  try {
    const adapterFile = path.join(work, `${stem}-${which2}-lora.gguf`);
    await download(adapterResponse, adapterFile, which);
    const baseResponse = await client.openJobBaseModel(job.id);
    const baseName = fileNameOf(baseResponse.headers.get("content-disposition")) ?? "base.gguf";
    const baseFile = path.join(work, baseName);
    await download(baseResponse, baseFile, `the base model ${baseName}`);

    if (options.format === "ollama") {
      const folder = path.join(work, "ollama");
      await mkdir(folder);
      await rename(baseFile, path.join(folder, baseName));
      await rename(adapterFile, path.join(folder, path.basename(adapterFile)));
      const header = await readGgufHeader(path.join(folder, baseName));
      await writeFile(path.join(folder, "Modelfile"), ollamaModelfile({ baseFile: baseName, adapterFile: path.basename(adapterFile), header }));
      if (existsSync(targets.file)) throw new CliError(`${targets.file} already exists: remove it or give another --out`);
      await rename(folder, targets.file);
      if (options.create !== false) await ollamaCreate(stem.toLowerCase(), targets.file);
      return done(targets.file);
    }

    const merged = path.join(work, "merged.gguf");
    const mergeType: MergedWeightType = options.quant === "q8_0" ? "q8_0" : "f16";
    progressLine(`merging ${which} into ${baseName} (${mergeType.toUpperCase()})`);
    await mergeLora({ base: baseFile, adapter: adapterFile, out: merged, type: mergeType, name: stem, onProgress: mergeProgress("merged") });
    let result = merged;
    if (quantizer) {
      result = path.join(work, "merged-q4_k_m.gguf");
      progressLine(`quantising to Q4_K_M with ${quantizer}`);
      await runQuantize(quantizer, merged, result);
    }
    await rename(result, targets.file);
    return done(targets.file);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** Where a format's result goes, and the folder its temporary files share (same file system: renames stay atomic). */
function targetsOf(options: ExportOptions, stem: string, which: string): { file: string; parent: string } {
  const fileName = `${stem}${which === "adapter" ? "" : `-${which}`}-${options.quant}.gguf`;
  let file: string;
  switch (options.format) {
    case "ollama":
      file = path.resolve(options.out ?? `${stem}${which === "adapter" ? "" : `-${which}`}-ollama`);
      break;
    case "lmstudio":
      file = path.join(path.resolve(options.out ?? path.join(os.homedir(), ".lmstudio", "models")), "svc", stem, fileName);
      break;
    default:
      // An existing folder as --out: the file goes in it under its usual name.
      file = options.out && isFolder(options.out) ? path.resolve(options.out, fileName) : path.resolve(options.out ?? fileName);
  }
  return { file, parent: path.dirname(file) };
}

function isFolder(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

async function writeAtomically(target: string, write: (temp: string) => Promise<unknown>): Promise<void> {
  await mkdir(path.dirname(target), { recursive: true });
  const temp = `${target}.partial-${process.pid}`;
  try {
    await write(temp);
    await rename(temp, target);
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
}

async function done(target: string): Promise<void> {
  const info = await stat(target);
  if (info.isDirectory()) {
    process.stdout.write(`wrote ${target}${path.sep}\n`);
  } else {
    process.stdout.write(`wrote ${target} (${formatBytes(info.size)})\n`);
  }
}

const run = promisify(execFile);

async function runQuantize(quantizer: string, input: string, output: string): Promise<void> {
  try {
    await run(quantizer, [input, output, "Q4_K_M"], { maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? "")
      .trim()
      .split("\n")
      .slice(-3)
      .join("\n");
    throw new CliError(`llama-quantize failed: ${stderr || (err as Error).message}`);
  }
}

/** `ollama create NAME -f Modelfile` in the folder, when Ollama is installed; otherwise says how. */
async function ollamaCreate(name: string, folder: string): Promise<void> {
  const found = (process.env.PATH ?? "")
    .split(path.delimiter)
    .some((dir) => dir && existsSync(path.join(dir, process.platform === "win32" ? "ollama.exe" : "ollama")));
  if (!found) {
    progressLine(`ollama is not on PATH: to add the model later, run  ollama create ${name} -f Modelfile  in ${folder}`);
    return;
  }
  progressLine(`ollama create ${name}`);
  try {
    await run("ollama", ["create", name, "-f", "Modelfile"], { cwd: folder, maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    const stderr = String((err as { stderr?: unknown }).stderr ?? "").trim();
    throw new CliError(`the files are in ${folder}, but ollama create failed: ${stderr || (err as Error).message}`);
  }
  progressLine(`ollama run ${name} now runs it`);
}
