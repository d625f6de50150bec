/**
 * A training worker process: takes one queued job at a time from the control plane, trains it
 * with the engine on the compute backend chosen for it (tfjs-wasm in this process, which blocks
 * its event loop — hence a process of its own — or a torch process started for the job), uploads
 * the adapters (GGUF and PEFT), and reports events. Cancel requests arrive between steps: every
 * log callback yields to the event loop so the link can read them.
 */
import { randomUUID } from "node:crypto";
import { promises as fs } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BackendChoice } from "../../engine/backends/select.js";
import type { ChatExample } from "../../engine/data/chat-jsonl.js";
import type { SampleAnswerer } from "../../engine/infer/sampleAnswers.js";
import { checkpointSampler } from "./checkpointSamples.js";
import type { TorchRanks } from "../../engine/backends/torch/ranks.js";
import { resolveBaseModel } from "./baseModelCache.js";
import { hfFolderToTrain } from "./hfFolderSource.js";
import { hfCopyPath } from "./hfFolderCopy.js";
import { parseHfFiles } from "./hfManifest.js";
import { loadProgressReporter } from "./loadProgress.js";
import type { CloudMessage } from "./protocol.js";
import { WorkerLink } from "./link.js";
import { llamaDeviceFact, workerFacts } from "./workerFacts.js";
import { workerStallMs } from "./stallTimeout.js";
import { adapterArtifactNames } from "../../sdk/api/jobs.js";
import { describeConfigProblems, jobConfigProblems } from "../../sdk/trainer/config.js";
import { cloudRefusal, uploadArtifactOnce, type ArtifactToUpload } from "./artifactUpload.js";
import { fileSha256 } from "../domain/fileSha256.js";
import { deliverArtifacts } from "./deliverArtifacts.js";
import { findPendingUploads, writePendingUpload, type PendingUpload } from "./pendingUploads.js";
import { isTransientStatus, TransferRefused, withTransferRetries } from "./transferRetry.js";

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
  /** This worker runs on the cloud's machine (the cloud's own workers): base models are read from the cloud's files, not downloaded. */
  sharedFiles?: boolean;
  /** Train each job as several data-parallel torch ranks (svc worker --procs / --gpus / --nodes). */
  ranks?: TorchRanks;
  log?: (line: string) => void;
}

export async function runTrainerWorker(options: TrainerWorkerOptions): Promise<{ stop(): void }> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const running = new Map<string, AbortController>();
  const facts = await workerFacts({ backend: options.backend, ranks: options.ranks });
  const link: WorkerLink = new WorkerLink({
    cloudUrl: options.cloudUrl,
    token: options.token,
    workerId: `${options.name}-${randomUUID().slice(0, 8)}`,
    name: options.name,
    holding: () => [...running.keys()],
    facts,
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
  // Adapters a previous run of this worker trained and did not deliver: held in hello (so the
  // cloud keeps their jobs) and finished before this worker takes new work.
  const pending = await findPendingUploads(options.workDir ?? os.tmpdir(), options.name);
  for (const { manifest } of pending) {
    running.set(manifest.jobId, new AbortController());
    link.uploading(manifest.jobId, true);
  }
  await link.connect();
  // llama.cpp's runtime (its native library, the device probe: seconds) loads once per process:
  // loaded now, while the worker waits for work, a job's first samples do not wait for it; its
  // device goes to the worker list once known (hello does not wait for it).
  void loadLlamaDevice(link, log);
  for (const { dir, manifest } of pending) {
    await finishPendingUpload(options, dir, manifest, log);
    running.delete(manifest.jobId);
    link.delivered(manifest.jobId);
  }
  link.ready();
  return { stop: () => link.close() };
}

/** Loads llama.cpp's runtime and tells the cloud its device; a runtime that does not load is only logged here (the samples that need it warn). */
async function loadLlamaDevice(link: WorkerLink, log: (line: string) => void): Promise<void> {
  try {
    const { getLlamaRuntime } = await import("../../engine/infer/llamaRuntime.js");
    const { llamaDeviceLogLine, llamaGpuSetting } = await import("../../engine/infer/llamaDevice.js");
    const { device } = await getLlamaRuntime();
    log(`svc worker: ${llamaDeviceLogLine(device, llamaGpuSetting())}`);
    link.llamaDevice(llamaDeviceFact(device));
  } catch (err) {
    log(`svc worker: llama.cpp did not load: ${(err as Error).message}`);
  }
}

/**
 * Delivers an adapter left by an earlier run of the worker and completes its job over HTTP (this
 * process's link cannot continue the dead one's event numbering); the work dir goes once the
 * cloud has acknowledged it all, or refused it for good.
 */
async function finishPendingUpload(options: TrainerWorkerOptions, dir: string, manifest: PendingUpload, log: (line: string) => void): Promise<void> {
  log(`job ${manifest.jobId}: resuming the upload of its adapter, left by an earlier run of this worker`);
  const delivery = await deliverArtifacts({ uploadUrl: throughCloud(options.cloudUrl, manifest.uploadUrl), token: options.token, log }, dir, manifest);
  let refusal = delivery.kind === "refused" ? delivery.error : null;
  if (!refusal) {
    const url = new URL(throughCloud(options.cloudUrl, `${options.cloudUrl}/v1/worker/jobs/${encodeURIComponent(manifest.jobId)}/complete`));
    url.searchParams.set("claim", String(manifest.claim));
    try {
      await withTransferRetries(
        async () => {
          const res = await fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${options.token}`, "content-type": "application/json" },
            body: JSON.stringify(manifest.completed),
            signal: AbortSignal.timeout(workerStallMs()),
          });
          if (res.ok) return void (await res.body?.cancel());
          const { message, code } = await cloudRefusal(res);
          if (isTransientStatus(res.status)) throw new Error(`completing the job failed: ${message}`);
          throw new TransferRefused(`completing the job failed: ${message}`, res.status, code);
        },
        { attempts: Number.POSITIVE_INFINITY, onRetry: (err, delayMs) => log(`job ${manifest.jobId}: ${err.message}; retrying in ${delayMs} ms`) },
      );
      log(`job ${manifest.jobId}: completed with the adapter delivered after a restart`);
    } catch (err) {
      refusal = err as TransferRefused;
    }
  }
  if (refusal) log(`job ${manifest.jobId}: ${refusal.message}; the adapter is dropped`);
  await fs.rm(dir, { recursive: true, force: true });
}

/** The cloud no longer wants this claim's artifacts: the job ended (say, cancelled) or was claimed again. */
function endedElsewhere(error: TransferRefused): boolean {
  return error.code === "job_ended" || error.code === "stale_claim";
}

async function runJob(options: TrainerWorkerOptions, link: WorkerLink, assign: Assign, signal: AbortSignal, log: (line: string) => void): Promise<void> {
  const { job } = assign;
  const dir = path.join(options.workDir ?? os.tmpdir(), `svc-job-${job.id}`);
  const emit = (type: Parameters<WorkerLink["emit"]>[1], data: Record<string, unknown>) => link.emit(job.id, type, data);
  let keepDir = false;
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
    const cacheDir = path.join(options.workDir ?? os.tmpdir(), "svc-models");
    const hfFiles = parseHfFiles(assign.model.hfFiles);
    // The model's Hugging Face copy (if this worker has one) survives the GGUF's pruning.
    const hfCopy = "hfFiles" in hfFiles ? hfCopyPath(cacheDir, hfFiles.hfFiles) : undefined;
    const base = await resolveBaseModel(assign.model, {
      cacheDir,
      sharedFiles: options.sharedFiles ?? false,
      url: throughCloud(options.cloudUrl, assign.model.url),
      token: options.token,
      log,
      alsoKeep: hfCopy ? [hfCopy] : [],
    });
    const modelPath = base.file;
    // The job's own choice (svc start under SVC_TRAIN_BACKEND=...) wins over the worker's default.
    const choice = config.backend ? parseBackendChoice(config.backend, "config.backend") : (options.backend ?? "auto");
    const { backend, reason } = await chooseBackend(choice, {
      device: options.device,
      dtype: config.dtype,
      checkpointActivations: config.gradientCheckpointing,
      quantizedBase: config.quantizedBase,
      log,
      ranks: options.ranks,
    });
    let samples: JobSamples | undefined;
    try {
      log(`job ${job.id}: ${reason}`);
      await emit("training.started", {
        model: config.model,
        baseSha256: base.sha256,
        trainExamples: train.length,
        evalExamples: evalSet?.length ?? 0,
        worker: options.name,
        backend: backend.info.name,
        device: backend.info.device,
        worldSize: backend.info.worldSize ?? 1,
        backendReason: reason,
      });
      const hf = await hfFolderToTrain(assign.model, {
        sharedFiles: options.sharedFiles ?? false,
        backend: backend.info.name,
        copy: {
          cacheDir,
          token: options.token,
          reach: (url) => throughCloud(options.cloudUrl, url),
          alsoKeep: [modelPath],
          log,
        },
      });
      if (hf.notice) {
        log(`job ${job.id}: ${hf.notice}`);
        void emit("training.progress", { message: hf.notice });
      }
      samples = openJobSamples(config, evalSet, modelPath, emit, log, job.id, signal);
      const uploadUrl = throughCloud(options.cloudUrl, assign.artifactUploadUrl);
      const uploadCheckpointFile = async (artifact: ArtifactToUpload) => {
        const sha256 = await fileSha256(artifact.file);
        await withTransferRetries(() => uploadArtifactOnce(uploadUrl, options.token, { ...artifact, sha256 }), {
          onRetry: (err, delayMs) => log(`job ${job.id}: ${err.message}; retrying in ${delayMs} ms`),
        });
      };
      const result = await trainLora({
        baseModel: modelPath,
        baseHfFolder: hf.folder,
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
        earlyStopping: config.earlyStopping ? { metric: config.earlyStopping.metric ?? "evalLoss", patience: config.earlyStopping.patience } : undefined,
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
            tokenAccuracy: Number.isFinite(entry.tokenAccuracy) ? entry.tokenAccuracy : null,
            evalTokenAccuracy: entry.evalTokenAccuracy !== undefined && Number.isFinite(entry.evalTokenAccuracy) ? entry.evalTokenAccuracy : null,
            learningRate: entry.learningRate,
            epoch: entry.epoch,
            tokensPerSecond: entry.tokensPerSecond,
          });
          // Let the link flush this event and read a cancel before the next (blocking) step.
          await new Promise((resolve) => setImmediate(resolve));
        },
        onCheckpoint: async ({ step, path: file, configPath, safetensorsPath }) => {
          // Its answers come from the file on this worker: queued now, whether or not the upload succeeds.
          samples?.at(step, file);
          const names = adapterArtifactNames(step);
          try {
            await uploadCheckpointFile({ file, name: names.gguf, kind: "checkpoint", step });
            await uploadCheckpointFile({ file: configPath, name: names.config, kind: "file", step });
            await uploadCheckpointFile({ file: safetensorsPath, name: names.weights, kind: "file", step });
          } catch (err) {
            // A checkpoint is a convenience: the run goes on, and the final adapter is still delivered.
            const message = `the checkpoint at step ${step} was not uploaded (${(err as Error).message}); training continues`;
            log(`job ${job.id}: ${message}`);
            void emit("training.progress", { message, level: "warning" });
            return;
          }
          void emit("checkpoint.saved", { step });
        },
      });
      if (result.stoppedEarly) {
        const { step, metric, bestStep, bestValue } = result.stoppedEarly;
        void emit("training.progress", {
          message: `early stopping at step ${step}: ${metric} has not improved for ${config.earlyStopping.patience} evaluations (best ${bestValue.toFixed(4)} at step ${bestStep})`,
        });
      }
      if (result.status === "aborted") {
        await emit("training.cancelled", { reason: "cancelled by user", step: result.steps });
        return;
      }
      const final = result.artifacts.find((a) => a.kind === "adapter")!;
      // The final adapter's answers, unless a checkpoint at that step already gave them: answered
      // while the adapter uploads, and sent before training.completed (the job's last event).
      samples?.at(final.step, final.path);
      const sampled = samples?.finish();
      const names = adapterArtifactNames();
      const finalFiles: ArtifactToUpload[] = [
        { file: final.path, name: names.gguf, kind: "adapter", step: final.step },
        { file: final.configPath, name: names.config, kind: "file", step: final.step },
        { file: final.safetensorsPath, name: names.weights, kind: "file", step: final.step },
      ];
      const manifest: PendingUpload = {
        jobId: job.id,
        claim: assign.claim,
        uploadUrl: assign.artifactUploadUrl,
        pid: process.pid,
        worker: options.name,
        artifacts: await Promise.all(
          finalFiles.map(async (a) => ({ ...a, sha256: await fileSha256(a.file), bytes: (await fs.stat(a.file)).size, acknowledged: false })),
        ),
        completed: {
          artifacts: result.artifacts.length,
          steps: result.steps,
          finalTrainLoss: result.finalTrainLoss,
          finalEvalLoss: result.finalEvalLoss,
          tokensPerSecond: result.tokensPerSecond,
          wallSeconds: result.wallSeconds,
          backend: backend.info.name,
        },
      };
      // From here the work dir holds the only copy of the adapter until the cloud acknowledges it.
      await writePendingUpload(dir, manifest);
      keepDir = true;
      link.uploading(job.id, true);
      for (const artifact of manifest.artifacts)
        log(`job ${job.id}: ${artifact.name} (sha256 ${artifact.sha256}, ${artifact.bytes} bytes) is written; uploading`);
      const delivery = await deliverArtifacts(
        { uploadUrl, token: options.token, log, warn: (message) => void emit("training.progress", { message, level: "warning" }) },
        dir,
        manifest,
      );
      keepDir = false;
      if (delivery.kind === "refused") {
        if (endedElsewhere(delivery.error)) return void log(`job ${job.id}: ${delivery.error.message}; the adapter is dropped`);
        throw delivery.error;
      }
      await sampled;
      await emit("training.completed", manifest.completed);
    } finally {
      await samples?.finish();
      await backend.dispose();
    }
  } catch (err) {
    const message = (err as Error).message || String(err);
    log(`job ${job.id} failed: ${message}`);
    await emit("training.failed", { error: message });
  } finally {
    // A final adapter the cloud has not acknowledged stays (keepDir): it is retried by a restarted worker.
    if (!keepDir) await fs.rm(dir, { recursive: true, force: true });
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
  // A dropped link or a restarting cloud is retried like an upload; a refusal (say, a 404) is not.
  return withTransferRetries(async () => {
    // Datasets are bounded by the upload limit (50 MiB by default): one overall deadline is enough.
    const res = await fetch(throughCloud(options.cloudUrl, url), {
      headers: { authorization: `Bearer ${options.token}` },
      signal: AbortSignal.timeout(workerStallMs() * 5),
    });
    if (res.ok) return res.text();
    await res.body?.cancel();
    const message = `downloading the ${what} failed: HTTP ${res.status}`;
    throw isTransientStatus(res.status) ? new Error(message) : new TransferRefused(message, res.status, undefined);
  });
}

/**
 * The samples of one job: each step answered and graded once, in order, then sent as a
 * `samples.graded` event. `at` only queues the work: llama.cpp answers on its own thread while
 * training goes on (the torch backend trains in another process; tfjs yields between steps), and
 * `finish` waits for the queue before the job completes.
 */
interface JobSamples {
  at(step: number, adapterPath?: string): void;
  /** Waits for every queued step, then frees llama.cpp's model; later calls wait for the same. */
  finish(): Promise<void>;
}

/**
 * Starts loading the base for sampling and queues checkpoint 0 (the base model). None when the job
 * has no eval set or asks for no samples. A sampling failure is a warning: training goes on.
 */
function openJobSamples(
  config: Record<string, any>,
  evalSet: ChatExample[] | undefined,
  modelPath: string,
  emit: (type: "samples.graded" | "training.progress", data: Record<string, unknown>) => Promise<void>,
  log: (line: string) => void,
  jobId: string,
  signal: AbortSignal,
): JobSamples | undefined {
  const count = config.samples?.count ?? 0;
  if (!evalSet?.length || count === 0) return undefined;
  const warn = (err: unknown) => {
    const message = `samples were not answered (${(err as Error).message}); training continues`;
    log(`job ${jobId}: ${message}`);
    void emit("training.progress", { message, level: "warning" });
  };
  const opening = (async (): Promise<SampleAnswerer> => {
    const { openSampleAnswerer } = await import("../../engine/infer/sampleAnswers.js");
    return openSampleAnswerer(modelPath);
  })();
  const sampler = opening.then((answerer) =>
    checkpointSampler({ answerer, evalSet, count, maxTokens: config.samples.maxTokens, graders: config.graders ?? [] }),
  );
  // One warning if the model cannot be loaded, not one per step.
  sampler.catch(warn);
  const done = new Set<number>();
  let queue: Promise<void> = Promise.resolve();
  let finished: Promise<void> | undefined;
  const samples: JobSamples = {
    at(step, adapterPath) {
      if (finished || done.has(step)) return;
      done.add(step);
      queue = queue.then(async () => {
        // A cancelled job takes no more events: what is still queued is dropped.
        const sample = signal.aborted ? undefined : await sampler.catch(() => undefined);
        if (!sample) return;
        try {
          await emit("samples.graded", { ...(await sample(step, adapterPath)) });
        } catch (err) {
          warn(err);
        }
      });
    },
    finish() {
      finished ??= (async () => {
        await queue;
        const answerer = await opening.catch(() => undefined);
        await answerer?.dispose();
      })();
      return finished;
    },
  };
  samples.at(0);
  return samples;
}
