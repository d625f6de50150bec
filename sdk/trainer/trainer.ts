/**
 * createTrainer / createSvc: how a project declares its training run in `src/svc/index.ts`.
 *
 * @example
 * import { createSvc, createTrainer } from "svc-studio";
 * export const trainer = createTrainer({
 *   name: "quickstart", model: "svc-tiny", dataset: "data/train.jsonl", evalDataset: "data/eval.jsonl",
 *   maxSteps: 60, evalSteps: 10, saveSteps: 20,
 *   callbacks: { onLog: (log) => console.log(log.step, log.loss) },
 * });
 * export default createSvc({ trainer });
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import type { CloudClient } from "../client.js";
import { ProjectSession } from "../session.js";
import { ensureLocalDaemon } from "../daemon.js";
import { validateChatJsonl } from "../jsonl.js";
import type { Job, JobEvent, TrainingLogData } from "../wire.js";
import { validateTrainerConfig, type JobTrainingConfig, type TrainerConfig } from "./config.js";
import type { CustomGrader, GradedSample, GraderConfig } from "./graders.js";
import { checkTrainerModel, effectiveMaxSeqLength } from "./modelCheck.js";
import { SVC_TINY } from "../../engine/model/config.js";
import type { DryRunOptions } from "./dryRun.js";
import type { DryRunReport } from "./dryRunReport.js";

export interface TrainerCallbacks {
  onStarted?: (event: { job: Job; data: Record<string, unknown> }) => void | Promise<void>;
  onLog?: (log: TrainingLogData) => void | Promise<void>;
  onCheckpoint?: (checkpoint: { step: number; infer: InferFn }) => void | Promise<void>;
  onCompleted?: (result: { job: Job; artifacts: number }) => void | Promise<void>;
  onFailed?: (failure: { job: Job; error: string }) => void | Promise<void>;
  /** Every event, raw (used by `svc start` to print the log). */
  onEvent?: (event: JobEvent) => void | Promise<void>;
}

/** Asks the checkpoint just saved for a reply, mid-run (served by the cloud's inference engine). */
export type InferFn = (messages: { role: "system" | "user" | "assistant"; content: string }[], options?: { maxTokens?: number }) => Promise<string>;

export interface CreateTrainerOptions extends TrainerConfig {
  callbacks?: TrainerCallbacks;
  abortSignal?: AbortSignal;
  /** Project folder that relative dataset paths and `.svc/state.json` belong to (default: cwd). */
  projectDir?: string;
  /**
   * Check instead of train: `svc start` (and the studio's Run training) then validates and
   * tokenizes the datasets, reports token counts, the step plan and a measured duration estimate,
   * and uploads nothing (see `Trainer.dryRun`). Same as `svc start --dry-run`.
   */
  dryRun?: boolean;
}

export interface Trainer {
  readonly name: string;
  readonly config: JobTrainingConfig;
  /** The dataset files as the trainer names them (relative to the project folder). */
  readonly datasets: { dataset: string; evalDataset?: string };
  /** Whether the trainer was created with `dryRun: true`: `svc start` then runs `dryRun()` instead of `start()`. */
  readonly isDryRun: boolean;
  /**
   * Validates and uploads the datasets, then queues the job. Refused for a trainer created with
   * `dryRun: true`. A `signal` (or the trainer's `abortSignal`) aborted before the job is created
   * stops it there with a TrainerStoppedError: no job is left behind.
   */
  start(options?: { signal?: AbortSignal }): Promise<Job>;
  /**
   * Everything start() checks, and what the run would cost, with nothing uploaded and no job:
   * per-split conversation and token counts (the model's own tokenizer), the longest conversation
   * against the limit, invalid lines, the steps, and a duration timed on this machine's backend.
   * @example
   * const report = await trainer.dryRun();
   * if (!report.ok) console.log(report.splits.flatMap((s) => s.errors));
   */
  dryRun(options?: DryRunOptions): Promise<DryRunReport>;
  /** Follows the job's events until it ends; resolves with the final job. `observer` gets the events too. */
  wait(observer?: TrainerCallbacks): Promise<Job>;
  cancel(): Promise<void>;
}

const TRAINER_BRAND = Symbol.for("svc.trainer");
const SVC_BRAND = Symbol.for("svc.app");

export function createTrainer(options: CreateTrainerOptions): Trainer {
  const config = validateTrainerConfig(options);
  const projectDir = () => path.resolve(options.projectDir ?? process.cwd());
  let client: CloudClient | null = null;
  let job: Job | null = null;

  const trainer: Trainer & { [TRAINER_BRAND]: true } = {
    [TRAINER_BRAND]: true,
    name: config.name,
    config,
    isDryRun: options.dryRun === true,
    datasets: { dataset: options.dataset, ...(options.evalDataset !== undefined ? { evalDataset: options.evalDataset } : {}) },
    async start(startOptions) {
      const checkStopped = () => {
        if (startOptions?.signal?.aborted || options.abortSignal?.aborted)
          throw new TrainerStoppedError(`trainer "${config.name}" was stopped before its job was created`);
      };
      if (options.dryRun)
        throw new Error(`trainer "${config.name}" has dryRun: true, so it trains nothing: call trainer.dryRun() (svc start does), or remove dryRun to train`);
      if (job) throw new Error(`trainer "${config.name}" was already started (job ${job.id})`);
      const dir = projectDir();
      const train = await readDataset(dir, options.dataset, "dataset");
      const evalData = options.evalDataset ? await readDataset(dir, options.evalDataset, "evalDataset") : null;
      const session = await ProjectSession.open({ projectDir: dir });
      await ensureLocalDaemon(session.cloudUrl); // a stopped local cloud is started, as for minting credentials
      client = await session.scopedClient();
      // The model is the cloud's knowledge: an unknown or serve-only one fails here, before any upload.
      const model = checkTrainerModel(config, await client.listModels());
      // svc-tiny counts one token per byte, so conversations too long for it are reported now, not
      // by the worker later; other models' tokenizers live with the worker, which checks there.
      if (model.name === SVC_TINY.name) {
        const limit = effectiveMaxSeqLength(config, model) ?? SVC_TINY.contextLength;
        checkLengths(train, options.dataset, "dataset", limit);
        if (evalData) checkLengths(evalData, options.evalDataset!, "evalDataset", limit);
      }
      checkStopped();
      const dataset = await client.uploadDataset(path.basename(options.dataset), train);
      const evalDataset = evalData ? await client.uploadDataset(path.basename(options.evalDataset!), evalData) : undefined;
      checkStopped();
      job = await client.createJob({ name: config.name, config: { ...config }, datasetId: dataset.id, evalDatasetId: evalDataset?.id });
      // Aborted while the job was being created: the listener would never fire, so cancel now.
      if (options.abortSignal?.aborted) void trainer.cancel();
      else options.abortSignal?.addEventListener("abort", () => void trainer.cancel(), { once: true });
      return job;
    },
    async wait(observer) {
      if (!job || !client) throw new Error("call start() before wait()");
      const c = client;
      const callbacks = options.callbacks ?? {};
      for await (const event of c.jobEvents(job.id)) {
        await observer?.onEvent?.(event);
        await callbacks.onEvent?.(event);
        if (event.type === "training.started") await callbacks.onStarted?.({ job, data: event.data });
        else if (event.type === "training.log") await callbacks.onLog?.(event.data as unknown as TrainingLogData);
        else if (event.type === "samples.graded") await gradeWithCustomGraders(c, job.id, options.graders ?? [], event.data);
        else if (event.type === "checkpoint.saved") {
          const step = Number(event.data.step);
          await callbacks.onCheckpoint?.({ step, infer: inferAt(c, job.id, step) });
        } else if (event.type === "training.completed")
          await callbacks.onCompleted?.({ job: await c.getJob(job.id), artifacts: Number(event.data.artifacts ?? 0) });
        else if (event.type === "training.failed") await callbacks.onFailed?.({ job: await c.getJob(job.id), error: String(event.data.error) });
      }
      job = await c.getJob(job.id);
      return job;
    },
    async cancel() {
      if (job && client) await client.cancelJob(job.id);
    },
    async dryRun(dryRunOptions) {
      // Only a read of the model list: an unscoped client, so no project is created either.
      const session = await ProjectSession.open({ projectDir: projectDir() });
      const { dryRun } = await import("./dryRun.js");
      return dryRun({ config, projectDir: projectDir(), dataset: options.dataset, evalDataset: options.evalDataset, client: session.client() }, dryRunOptions);
    },
  };
  return trainer;
}

/**
 * Runs the trainer's custom graders on one step's samples and posts their grades: the functions
 * live in this process only (the worker sends their grades as null). A grader that throws grades
 * that sample null, and says why on stderr; a refused post is reported the same way, not fatal.
 */
async function gradeWithCustomGraders(client: CloudClient, jobId: string, graders: readonly GraderConfig[], data: Record<string, unknown>): Promise<void> {
  const custom = graders.filter((g): g is CustomGrader => typeof g === "object" && "grade" in g);
  const samples = Array.isArray(data.samples) ? (data.samples as GradedSample[]) : [];
  if (custom.length === 0 || samples.length === 0) return;
  const grades: Record<string, (boolean | null)[]> = {};
  for (const grader of custom) {
    grades[grader.name] = [];
    for (const sample of samples) {
      try {
        grades[grader.name].push((await grader.grade({ prompt: sample.prompt, reference: sample.reference, answer: sample.answer })) === true);
      } catch (err) {
        process.stderr.write(`grader ${grader.name} threw on a sample at step ${data.step}: ${(err as Error).message}\n`);
        grades[grader.name].push(null);
      }
    }
  }
  try {
    await client.gradeJobSamples(jobId, Number(data.step), grades);
  } catch (err) {
    process.stderr.write(`the custom grades at step ${data.step} were not saved: ${(err as Error).message}\n`);
  }
}

/** start() was stopped (its signal aborted) before the job existed; nothing was left in the cloud but uploaded datasets. */
export class TrainerStoppedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrainerStoppedError";
  }
}

function inferAt(client: CloudClient, jobId: string, step: number): InferFn {
  return async (messages, options) => {
    const response = await client.openInferenceChat({
      target: { kind: "checkpoint", jobId, step },
      messages,
      max_tokens: options?.maxTokens ?? 64,
      stream: false,
    });
    const body = (await response.json()) as { choices: { message: { content: string } }[] };
    return body.choices[0]?.message.content ?? "";
  };
}

/** Reads and validates a dataset before anything is uploaded: bad lines are reported by number. */
async function readDataset(projectDir: string, file: string, field: string): Promise<string> {
  const full = path.resolve(projectDir, file);
  let text: string;
  try {
    text = await readFile(full, "utf8");
  } catch {
    throw new Error(`${field}: cannot read ${full}`);
  }
  const report = validateChatJsonl(text);
  if (report.errors.length > 0) throw new Error(`${field} ${file} is invalid:\n${report.errors.join("\n")}`);
  return text;
}

/** Conversations longer than the sequence limit, reported like any other invalid line. */
function checkLengths(text: string, file: string, field: string, contextLength: number): void {
  const report = validateChatJsonl(text, { contextLength });
  if (report.errors.length > 0) throw new Error(`${field} ${file} is invalid:\n${report.errors.join("\n")}`);
}

export interface Svc {
  readonly trainer: Trainer | null;
}

/** Registers the project's trainer; `export default createSvc({ trainer })` from src/svc/index.ts. */
export function createSvc(options: { trainer?: Trainer }): Svc {
  if (options.trainer !== undefined && !isTrainer(options.trainer)) throw new Error("createSvc: trainer must come from createTrainer(...)");
  return { [SVC_BRAND]: true, trainer: options.trainer ?? null } as Svc;
}

export const isTrainer = (value: unknown): value is Trainer => Boolean(value && (value as Record<symbol, unknown>)[TRAINER_BRAND]);
export const isSvc = (value: unknown): value is Svc => Boolean(value && (value as Record<symbol, unknown>)[SVC_BRAND]);
