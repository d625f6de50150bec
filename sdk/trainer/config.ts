/**
 * The trainer configuration users write in `src/svc/index.ts`, validated when createTrainer is
 * called so a typo fails at once with a message naming the field, not minutes later in a worker.
 */
import { Errors } from "@sinclair/typebox/errors";
import {
  JobConfig,
  LORA_TARGET_MODULES,
  TRAINING_BACKENDS,
  type EvalMetric,
  type QuantizedBase,
  type TrainingBackend,
  type TrainingDtype,
} from "../api/jobConfig.js";
import { DEFAULT_SAMPLES, graderProblems, toJobGraders, type GraderConfig, type SamplesConfig } from "./graders.js";

export type { CustomGrader, GraderConfig, GradedSample, JobGrader, SamplesConfig } from "./graders.js";
export { SUPPORTED_MODELS, type EvalMetric, type QuantizedBase, type TrainingBackend, type TrainingDtype } from "../api/jobConfig.js";

export interface LoraConfig {
  /** Rank of the low-rank update (default 8). */
  r?: number;
  /** Scaling numerator: the update is scaled by alpha / r (default 16). */
  alpha?: number;
  /** Projections that get an adapter, PEFT names (default: all seven attention and MLP projections). */
  targetModules?: (typeof LORA_TARGET_MODULES)[number][];
}

export interface EarlyStoppingConfig {
  /** What must improve: "evalLoss" (lower is better, the default) or "evalTokenAccuracy" (higher is better). */
  metric?: EvalMetric;
  /** Evaluations in a row without improvement that end the run, an integer from 1 to 1000. */
  patience: number;
}

export interface TrainerConfig {
  /** Shown as the job name. */
  name: string;
  /**
   * Base model to fine-tune: the name of a trainable model registered with the cloud (`svc models
   * list`), e.g. "svc-tiny" or a GGUF added with `svc models add`.
   */
  model: string;
  /** JSONL file in the OpenAI chat fine-tuning format, relative to the project folder. */
  dataset: string;
  /** Optional JSONL file for periodic eval loss. */
  evalDataset?: string;
  lora?: LoraConfig;
  /** Exactly one of maxSteps / numTrainEpochs. */
  maxSteps?: number;
  numTrainEpochs?: number;
  learningRate?: number;
  batchSize?: number;
  /** Evaluate every N steps (needs evalDataset). */
  evalSteps?: number;
  /** Save a checkpoint adapter every N steps (0: only the final adapter). */
  saveSteps?: number;
  /**
   * Stop a run whose eval metric has not improved for `patience` evaluations (every evalSteps;
   * needs evalDataset and evalSteps). The final adapter is the stopping step's; the studio marks
   * the best checkpoint by the same metric and offers it first.
   */
  earlyStopping?: EarlyStoppingConfig;
  /** Same seed, same data, same config: same losses. */
  seed?: number;
  schedule?: "cosine" | "linear";
  warmupSteps?: number;
  /**
   * Longest conversation in tokens, an integer from 16 to 32768 (default: the smaller of the
   * model's context and 1024). Longer conversations are reported, not cut. Memory grows with it.
   */
  maxSeqLength?: number;
  /**
   * The compute backend that trains this job: "torch" (a Python process with PyTorch: all CPU
   * cores, or the GPU), "tfjs" (in the worker, no install) or "auto" (torch where the worker's
   * Python imports it, else tfjs). Default: SVC_TRAIN_BACKEND where set, else the worker's choice.
   */
  backend?: TrainingBackend;
  /**
   * The base model's compute dtype on the torch backend (the LoRA trains in float32 either way):
   * "auto" (default) is bfloat16 on a GPU and on CPUs that compute it in hardware (AVX512-BF16,
   * AMX, Arm BF16), about twice float32's speed at half its memory; float32 elsewhere. tfjs
   * always computes in float32.
   */
  dtype?: TrainingDtype;
  /**
   * Recompute each layer's activations in the backward pass instead of keeping them (torch
   * backend): much less memory for about a third more compute. "auto" (default) turns it on when a
   * batch's activations would exceed about 2 GiB.
   */
  gradientCheckpointing?: boolean | "auto";
  /**
   * A quantised GGUF base on the torch backend: "keep" (default) holds its Q8_0, Q4_K and Q6_K
   * projections as the file's blocks and dequantises each layer as the forward and backward pass
   * reach it (a Q4_K_M base takes about a third of its bfloat16 memory); "dequantize" expands
   * every weight to the compute dtype when loading (faster steps, more memory). tfjs always
   * dequantises.
   */
  quantizedBase?: QuantizedBase;
  /**
   * At the start (checkpoint 0, the base model), at each checkpoint and at the end, the model
   * answers the first `samples.count` eval prompts (default 8, greedy, at most `samples.maxTokens`
   * tokens), shown on the job page; needs evalDataset.
   */
  samples?: SamplesConfig;
  /**
   * How each sample answer is judged against the eval row's reference (its last assistant
   * message): "exact" (default), "contains", "json_valid", { type: "regex", pattern },
   * { type: "json_schema", schema }, or { name, grade({ prompt, reference, answer }) } (run by
   * `svc start`, which follows the job). A sample passes when every grader says yes.
   */
  graders?: GraderConfig[];
}

/** What is sent to the cloud as the job's config: the contract's JobConfig, with createTrainer's defaults filled in. */
export type JobTrainingConfig = JobConfig &
  Required<Pick<JobConfig, "name" | "model" | "learningRate" | "batchSize" | "evalSteps" | "saveSteps" | "seed" | "schedule">> & {
    lora: Required<LoraConfig>;
    earlyStopping?: Required<EarlyStoppingConfig>;
    samples?: Required<SamplesConfig>;
  };

/** One bad field of a configuration: its path ("lora.r") and what it must be ("must be an integer from 1 to 256"). */
export interface ConfigProblem {
  field: string;
  message: string;
}

/** Every problem, each as `<prefix><field>: <message>`, joined by "; " (the cloud's 400 for a job config). */
export function describeConfigProblems(problems: readonly ConfigProblem[], prefix = ""): string {
  return problems.map((p) => `${prefix}${p.field}: ${p.message}`).join("; ");
}

export class TrainerConfigError extends Error {
  /** Every bad field; `field` is the first of them. */
  readonly problems: ConfigProblem[];
  readonly field: string;
  constructor(problems: ConfigProblem[]);
  constructor(field: string, message: string);
  constructor(fieldOrProblems: ConfigProblem[] | string, message = "is invalid") {
    const problems = typeof fieldOrProblems === "string" ? [{ field: fieldOrProblems, message }] : fieldOrProblems;
    super(`createTrainer: ${problems.map((p) => `${p.field} ${p.message}`).join("; ")}`);
    this.name = "TrainerConfigError";
    this.problems = problems;
    this.field = problems[0].field;
  }
}

const HUB_DATASET = /^(hf:\/\/|https?:\/\/|[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$)/;

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);
const isIntegerIn = (value: unknown, min: number, max = Number.MAX_SAFE_INTEGER) =>
  Number.isInteger(value) && (value as number) >= min && (value as number) <= max;

/**
 * The problems of a job's config (createTrainer's output, a JobTrainingConfig) by the contract's rules (JobConfig in
 * sdk/api/jobConfig.ts), shared by `createTrainer` (before anything is uploaded), the cloud (`POST /v1/jobs` answers 400)
 * and the worker (before it trains), so they cannot disagree. Every problem comes back at once, one per field, in field
 * order; how long a run is (exactly one of maxSteps and numTrainEpochs) is the one rule across fields. Which models
 * exist is the cloud's to check.
 */
export function jobConfigProblems(config: unknown): ConfigProblem[] {
  if (!isObject(config)) return [{ field: "config", message: "must be an object" }];
  const given = (field: string) => config[field] !== undefined;
  const problems: ConfigProblem[] =
    given("maxSteps") === given("numTrainEpochs") ? [{ field: "maxSteps", message: "or numTrainEpochs must be set (exactly one of them)" }] : [];
  const seen = new Set<string>();
  for (const error of Errors(JobConfig, config)) {
    // A list's item is reported as the list ("lora.targetModules"); a missing property once, by its own rule.
    const field = error.path
      .split("/")
      .slice(1)
      .filter((part) => !/^\d+$/.test(part))
      .join(".");
    const rule = (error.schema as { errorMessage?: string }).errorMessage;
    // Graders are reported by graderProblems, below: it names the grader and compiles its pattern or schema.
    if (seen.has(field) || !rule || field.split(".")[0] === "graders") continue;
    seen.add(field);
    problems.push({ field, message: rule.replace("{value}", JSON.stringify(error.value)) });
  }
  if (given("graders")) problems.push(...graderProblems(config.graders, { functions: false }));
  return problems;
}

/** A config field's rule, as the contract words it. */
const ruleOf = (field: "name" | "model") => JobConfig.properties[field].errorMessage as string;

export function validateTrainerConfig(config: TrainerConfig): JobTrainingConfig {
  if (!isObject(config)) throw new TrainerConfigError([{ field: "config", message: "must be an object" }]);
  const problems: ConfigProblem[] = [];
  const fail = (field: string, message: string) => problems.push({ field, message });
  // A trainer names both (the job config may leave them out); their shape is the contract's rule, checked below.
  // Which models exist is the cloud's knowledge: `svc start` asks it before uploading anything.
  for (const field of ["name", "model"] as const) if (config[field] === undefined) fail(field, ruleOf(field));
  for (const field of ["dataset", "evalDataset"] as const) {
    const value = config[field];
    if (value === undefined && field === "evalDataset") continue;
    if (typeof value !== "string" || !value) fail(field, "must be the path of a JSONL file in the project");
    else if (HUB_DATASET.test(value) && !value.endsWith(".jsonl")) {
      fail(field, `"${value}" looks like a hub dataset; hub datasets are not available offline. Use a local JSONL file.`);
    }
  }
  // createTrainer's evalSteps needs an evalDataset to evaluate; unset, the job gets 0 (no evaluation).
  if (config.evalSteps !== undefined && !isIntegerIn(config.evalSteps, 1, 1_000_000)) fail("evalSteps", "must be an integer from 1 to 1000000");
  else if (config.evalSteps !== undefined && config.evalDataset === undefined) fail("evalSteps", "needs evalDataset");
  // Early stopping compares evaluations: without periodic ones there is only the last.
  if (config.earlyStopping !== undefined && (config.evalDataset === undefined || config.evalSteps === undefined))
    fail("earlyStopping", "needs evalDataset and evalSteps");
  const fromEnvironment = config.backend === undefined ? backendFromEnvironment() : undefined;
  if (fromEnvironment !== undefined && !(TRAINING_BACKENDS as readonly string[]).includes(fromEnvironment)) {
    fail("backend (from SVC_TRAIN_BACKEND)", `must be one of ${TRAINING_BACKENDS.join(", ")}, got "${fromEnvironment}"`);
  }
  // Custom graders are functions here; the job config carries them by name.
  if (config.graders !== undefined) problems.push(...graderProblems(config.graders, { functions: true }));
  problems.push(...jobConfigProblems({ ...config, evalSteps: undefined, graders: undefined }));
  if (problems.length > 0) throw new TrainerConfigError(problems);
  const backend = config.backend ?? fromEnvironment;
  const lora = config.lora ?? {};
  return {
    name: config.name,
    model: config.model,
    ...(config.maxSteps !== undefined ? { maxSteps: config.maxSteps } : { numTrainEpochs: config.numTrainEpochs }),
    learningRate: config.learningRate ?? 2e-3,
    batchSize: config.batchSize ?? 8,
    evalSteps: config.evalSteps ?? 0,
    saveSteps: config.saveSteps ?? 0,
    seed: config.seed ?? 42,
    schedule: config.schedule ?? "cosine",
    ...(config.warmupSteps !== undefined ? { warmupSteps: config.warmupSteps } : {}),
    ...(config.maxSeqLength !== undefined ? { maxSeqLength: config.maxSeqLength } : {}),
    ...(backend !== undefined ? { backend } : {}),
    ...(config.earlyStopping !== undefined
      ? { earlyStopping: { metric: config.earlyStopping.metric ?? "evalLoss", patience: config.earlyStopping.patience } }
      : {}),
    ...(config.dtype !== undefined ? { dtype: config.dtype } : {}),
    ...(config.gradientCheckpointing !== undefined ? { gradientCheckpointing: config.gradientCheckpointing } : {}),
    ...(config.quantizedBase !== undefined ? { quantizedBase: config.quantizedBase } : {}),
    ...(config.evalDataset !== undefined
      ? {
          samples: { count: config.samples?.count ?? DEFAULT_SAMPLES.count, maxTokens: config.samples?.maxTokens ?? DEFAULT_SAMPLES.maxTokens },
          graders: toJobGraders(config.graders ?? ["exact"]),
        }
      : {}),
    lora: { r: lora.r ?? 8, alpha: lora.alpha ?? 16, targetModules: lora.targetModules ?? [...LORA_TARGET_MODULES] },
  };
}

/** SVC_TRAIN_BACKEND of the process that creates the trainer (`SVC_TRAIN_BACKEND=torch npx svc start`). */
function backendFromEnvironment(): TrainingBackend | undefined {
  const value = typeof process === "undefined" ? undefined : process.env.SVC_TRAIN_BACKEND?.trim();
  return value ? (value as TrainingBackend) : undefined;
}
