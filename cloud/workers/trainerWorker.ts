/**
 * A training worker process: takes one queued job at a time from the control plane, trains it
 * with the engine on the compute backend chosen for it (tfjs-wasm in this process, which blocks
 * its event loop — hence a process of its own — or a torch process started for the job), uploads
 * the adapters (GGUF and PEFT), and reports events. Cancel requests arrive between steps: every
 * log callback yields to the event loop so the link can read them.
 */
import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream, promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { BackendChoice } from "../../engine/backends/select.js";
import { loadProgressReporter } from "./loadProgress.js";
import type { CloudMessage } from "./protocol.js";
import { WorkerLink } from "./link.js";
import { stallTimeout, workerStallMs } from "./stallTimeout.js";
import { adapterArtifactNames } from "../../sdk/api/jobs.js";
import { describeConfigProblems, jobConfigProblems } from "../../sdk/trainer/config.js";
import { safeFileName } from "../../sdk/platform/fileNames.js";

type Assign = Extract<CloudMessage, { type: "assign" }>;

export interface TrainerWorkerOptions {
  cloudUrl: string;
  token: string;
  name: string;
  /** Scratch space for datasets and adapters while a job runs. */
  workDir?: string;
  /** Compute backend: auto (torch where Python has it, else tfjs), torch or tfjs. */
  backend?: BackendChoice;
  /** torch device override (cuda, cuda:1, mps, cpu); default cuda > mps > cpu. */
  device?: string;
  log?: (line: string) => void;
}

export async function runTrainerWorker(options: TrainerWorkerOptions): Promise<{ stop(): void }> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const running = new Map<string, AbortController>();
  const link: WorkerLink = new WorkerLink({
    cloudUrl: options.cloudUrl,
    token: options.token,
    workerId: `${options.name}-${randomUUID().slice(0, 8)}`,
    name: options.name,
    holding: () => [...running.keys()],
    log,
    onMessage: (message) => {
      if (message.type === "cancel") running.get(message.jobId)?.abort();
      // The job ended without us (cancelled, failed as an orphan) or was claimed again: stop it.
      if (message.type === "nack" && (message.code === "job_ended" || message.code === "stale_claim")) running.get(message.jobId)?.abort();
      if (message.type === "assign") {
        link.busy();
        const controller = new AbortController();
        running.set(message.job.id, controller);
        void runJob(options, link, message, controller.signal, log).finally(() => {
          running.delete(message.job.id);
          link.forget(message.job.id);
          link.ready();
        });
      }
    },
  });
  await link.connect();
  link.ready();
  return { stop: () => link.close() };
}

async function runJob(options: TrainerWorkerOptions, link: WorkerLink, assign: Assign, signal: AbortSignal, log: (line: string) => void): Promise<void> {
  const { job } = assign;
  const dir = path.join(options.workDir ?? os.tmpdir(), `svc-job-${job.id}`);
  const emit = (type: Parameters<WorkerLink["emit"]>[1], data: Record<string, unknown>) => link.emit(job.id, type, data);
  try {
    await fs.mkdir(dir, { recursive: true });
    // The rules the cloud checked at creation (the same function): a job stored before them fails here, naming every field.
    const problems = jobConfigProblems(job.config);
    if (problems.length > 0) throw new Error(describeConfigProblems(problems, "config."));
    const config = job.config as Record<string, any>;
    const { parseChatJsonl } = await import("../../engine/data/chat-jsonl.js");
    const { trainLora } = await import("../../engine/train/lora-trainer.js");
    const { chooseBackend, parseBackendChoice } = await import("../../engine/backends/select.js");
    const train = parseChatJsonl(await download(options, assign.datasetUrl, "dataset"), { name: "dataset" });
    const evalSet = assign.evalDatasetUrl ? parseChatJsonl(await download(options, assign.evalDatasetUrl, "evalDataset"), { name: "evalDataset" }) : undefined;
    const modelPath = await resolveModel(options, assign);
    // The job's own choice (svc start under SVC_TRAIN_BACKEND=...) wins over the worker's default.
    const choice = config.backend ? parseBackendChoice(config.backend, "config.backend") : (options.backend ?? "auto");
    const { backend, reason } = await chooseBackend(choice, { device: options.device, log });
    try {
      log(`job ${job.id}: ${reason}`);
      await emit("training.started", {
        model: config.model,
        trainExamples: train.length,
        evalExamples: evalSet?.length ?? 0,
        worker: options.name,
        backend: backend.info.name,
        device: backend.info.device,
        backendReason: reason,
      });
      const upload = async (file: string, name: string, kind: "checkpoint" | "adapter" | "file", step: number) => {
        // The upload URL carries the claim (fencing number); the file's own fields go beside it.
        const url = new URL(throughCloud(options.cloudUrl, assign.artifactUploadUrl));
        url.searchParams.set("name", name);
        url.searchParams.set("kind", kind);
        url.searchParams.set("step", String(step));
        const stall = stallTimeout(workerStallMs(), `uploading ${name}`);
        try {
          const res = await fetch(url, {
            method: "PUT",
            headers: { authorization: `Bearer ${options.token}`, "content-type": "application/octet-stream" },
            body: createReadStream(file).pipe(stall.through()) as unknown as BodyInit,
            duplex: "half",
            signal: stall.signal,
          } as RequestInit);
          if (!res.ok) throw new Error(`uploading ${name} failed: ${await cloudRefusal(res)}`);
        } catch (err) {
          throw stall.signal.aborted ? stall.signal.reason : err;
        } finally {
          stall.done();
        }
      };
      const result = await trainLora({
        baseModel: modelPath,
        baseModelName: config.model,
        backend,
        maxSeqLength: config.maxSeqLength,
        train,
        eval: evalSet,
        outputDir: dir,
        lora: config.lora,
        maxSteps: config.maxSteps,
        numTrainEpochs: config.numTrainEpochs,
        learningRate: config.learningRate,
        batchSize: config.batchSize,
        evalSteps: config.evalSteps || undefined,
        // A job reports evaluations only as training.log frames (every evalSteps and the last step), and
        // the dry run counts and times exactly those: one before step 1 would cost time and show nowhere.
        evaluateBeforeTraining: false,
        saveSteps: config.saveSteps || undefined,
        seed: config.seed,
        schedule: config.schedule,
        warmupSteps: config.warmupSteps,
        signal,
        onLoadProgress: loadProgressReporter((message) => void emit("training.progress", { message })),
        onNotice: (message) => void emit("training.progress", { message }),
        onLog: async (entry) => {
          void emit("training.log", {
            step: entry.step,
            loss: entry.loss,
            evalLoss: entry.evalLoss ?? null,
            learningRate: entry.learningRate,
            epoch: entry.epoch,
            tokensPerSecond: entry.tokensPerSecond,
          });
          // Let the link flush this event and read a cancel before the next (blocking) step.
          await new Promise((resolve) => setImmediate(resolve));
        },
        onCheckpoint: async ({ step, path: file, configPath, safetensorsPath }) => {
          const names = adapterArtifactNames(step);
          await upload(file, names.gguf, "checkpoint", step);
          await upload(configPath, names.config, "file", step);
          await upload(safetensorsPath, names.weights, "file", step);
          void emit("checkpoint.saved", { step });
        },
      });
      if (result.status === "aborted") {
        await emit("training.cancelled", { reason: "cancelled by user", step: result.steps });
        return;
      }
      const final = result.artifacts.find((a) => a.kind === "adapter")!;
      const names = adapterArtifactNames();
      await upload(final.path, names.gguf, "adapter", final.step);
      await upload(final.configPath, names.config, "file", final.step);
      await upload(final.safetensorsPath, names.weights, "file", final.step);
      await emit("training.completed", {
        artifacts: result.artifacts.length,
        steps: result.steps,
        finalTrainLoss: result.finalTrainLoss,
        finalEvalLoss: result.finalEvalLoss,
        tokensPerSecond: result.tokensPerSecond,
        wallSeconds: result.wallSeconds,
        backend: backend.info.name,
      });
    } finally {
      await backend.dispose();
    }
  } catch (err) {
    const message = (err as Error).message || String(err);
    log(`job ${job.id} failed: ${message}`);
    await emit("training.failed", { error: message });
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/**
 * The assigning instance names its own address in the URLs it sends; behind a load balancer
 * (several instances on one PostgreSQL) that instance may be gone by the time the worker uses them,
 * so each is taken through the cloud URL this worker was given: the same path and query.
 */
export function throughCloud(cloudUrl: string, url: string): string {
  const target = new URL(url);
  const base = new URL(cloudUrl);
  return `${base.origin}${base.pathname.replace(/\/$/, "")}${target.pathname}${target.search}`;
}

async function download(options: TrainerWorkerOptions, url: string | null, what: string): Promise<string> {
  if (!url) throw new Error(`the job has no ${what}`);
  // Datasets are bounded by the upload limit (50 MiB by default): one overall deadline is enough.
  const res = await fetch(throughCloud(options.cloudUrl, url), { headers: { authorization: `Bearer ${options.token}` }, signal: AbortSignal.timeout(workerStallMs() * 5) });
  if (!res.ok) throw new Error(`downloading the ${what} failed: HTTP ${res.status}`);
  return res.text();
}

/** The base model's GGUF: the cloud's own file when this worker shares its machine, else downloaded. */
async function resolveModel(options: TrainerWorkerOptions, assign: Assign): Promise<string> {
  if (assign.model.path) {
    try {
      await fs.access(assign.model.path);
      return assign.model.path;
    } catch {
      // a remote worker: fall through to the download
    }
  }
  const cache = path.join(options.workDir ?? os.tmpdir(), "svc-models");
  await fs.mkdir(cache, { recursive: true });
  const file = path.join(cache, `${safeFileName(assign.model.name)}.gguf`);
  try {
    await fs.access(file);
    return file;
  } catch {
    const stall = stallTimeout(workerStallMs(), `downloading the base model ${assign.model.name}`);
    try {
      const res = await fetch(throughCloud(options.cloudUrl, assign.model.url), { headers: { authorization: `Bearer ${options.token}` }, signal: stall.signal });
      if (!res.ok || !res.body) throw new Error(`downloading the base model ${assign.model.name} failed: HTTP ${res.status}`);
      // Streamed to disk: a base model may be larger than this worker's free memory.
      await pipeline(Readable.fromWeb(res.body as import("node:stream/web").ReadableStream), stall.through(), createWriteStream(`${file}.part`), { signal: stall.signal });
    } catch (err) {
      await fs.rm(`${file}.part`, { force: true });
      throw stall.signal.aborted ? stall.signal.reason : err;
    } finally {
      stall.done();
    }
    await fs.rename(`${file}.part`, file);
    return file;
  }
}

/** The cloud's own sentence from its error envelope (e.g. that its disk is full), else the status and body. */
async function cloudRefusal(res: Response): Promise<string> {
  const text = await res.text();
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return `${message} (HTTP ${res.status})`;
  } catch {
    // not the cloud's envelope: fall through to the raw body
  }
  return `HTTP ${res.status} ${text}`;
}
