/**
 * The trainer configuration users write in `src/svc/index.ts`, validated when createTrainer is
 * called so a typo fails at once with a message naming the field, not minutes later in a worker.
 */

/**
 * The models shipped with svc (always registered, always trainable). Any other registered GGUF
 * of a trainable architecture (llama, qwen2, qwen3) can be trained too: `svc models add FILE.gguf`,
 * then `model: "<its name>"`; `svc start` checks the name against the cloud before uploading.
 */
export const SUPPORTED_MODELS = ["svc-tiny"] as const;
export type SupportedModel = (typeof SUPPORTED_MODELS)[number];

/** Bounds of maxSeqLength: below 16 tokens a chat template alone does not fit; above 32768 no GPU here holds the activations. */
export const MAX_SEQ_LENGTH_RANGE = { min: 16, max: 32768 } as const;

export const LORA_TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;

export interface LoraConfig {
  /** Rank of the low-rank update (default 8). */
  r?: number;
  /** Scaling numerator: the update is scaled by alpha / r (default 16). */
  alpha?: number;
  /** Projections that get an adapter, PEFT names (default: all seven attention and MLP projections). */
  targetModules?: (typeof LORA_TARGET_MODULES)[number][];
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
}

export const TRAINING_BACKENDS = ["auto", "torch", "tfjs"] as const;
export type TrainingBackend = (typeof TRAINING_BACKENDS)[number];

/** What is sent to the cloud as the job's config (defaults filled in, paths removed). */
export type JobTrainingConfig = Required<Omit<TrainerConfig, "dataset" | "evalDataset" | "maxSteps" | "numTrainEpochs" | "lora" | "warmupSteps" | "maxSeqLength" | "backend">> & {
  backend?: TrainingBackend;
  maxSteps?: number;
  numTrainEpochs?: number;
  warmupSteps?: number;
  maxSeqLength?: number;
  lora: Required<LoraConfig>;
};

export class TrainerConfigError extends Error {
  constructor(readonly field: string, message: string) {
    super(`createTrainer: ${field} ${message}`);
    this.name = "TrainerConfigError";
  }
}

const HUB_DATASET = /^(hf:\/\/|https?:\/\/|[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$)/;

export function validateTrainerConfig(config: TrainerConfig): JobTrainingConfig {
  if (!config || typeof config !== "object") throw new TrainerConfigError("config", "must be an object");
  const fail = (field: string, message: string): never => {
    throw new TrainerConfigError(field, message);
  };
  if (typeof config.name !== "string" || config.name.trim().length === 0 || config.name.length > 120) fail("name", "must be 1 to 120 characters");
  // Which names exist is the cloud's knowledge: `svc start` asks it before uploading anything.
  if (typeof config.model !== "string" || config.model.trim().length === 0) fail("model", `must name a registered base model, e.g. "${SUPPORTED_MODELS[0]}"`);
  for (const field of ["dataset", "evalDataset"] as const) {
    const value = config[field];
    if (value === undefined && field === "evalDataset") continue;
    if (typeof value !== "string" || !value) fail(field, "must be the path of a JSONL file in the project");
    if (HUB_DATASET.test(value!) && !value!.endsWith(".jsonl")) {
      fail(field, `"${value}" looks like a hub dataset; hub datasets are not available offline. Use a local JSONL file.`);
    }
  }
  const positiveInt = (field: string, value: unknown, max: number) => {
    if (value === undefined) return;
    if (!Number.isInteger(value) || (value as number) < 1 || (value as number) > max) fail(field, `must be an integer from 1 to ${max}`);
  };
  if ((config.maxSteps === undefined) === (config.numTrainEpochs === undefined)) fail("maxSteps", "or numTrainEpochs must be set (exactly one of them)");
  positiveInt("maxSteps", config.maxSteps, 1_000_000);
  if (config.numTrainEpochs !== undefined && !(config.numTrainEpochs > 0 && config.numTrainEpochs <= 1000)) fail("numTrainEpochs", "must be a number above 0 and at most 1000");
  positiveInt("batchSize", config.batchSize, 1024);
  positiveInt("evalSteps", config.evalSteps, 1_000_000);
  if (config.saveSteps !== undefined && (!Number.isInteger(config.saveSteps) || config.saveSteps < 0)) fail("saveSteps", "must be a non-negative integer");
  if (config.learningRate !== undefined && !(config.learningRate > 0 && config.learningRate < 1)) fail("learningRate", "must be a number between 0 and 1");
  if (config.seed !== undefined && !Number.isInteger(config.seed)) fail("seed", "must be an integer");
  if (config.schedule !== undefined && config.schedule !== "cosine" && config.schedule !== "linear") fail("schedule", 'must be "cosine" or "linear"');
  if (config.warmupSteps !== undefined && (!Number.isInteger(config.warmupSteps) || config.warmupSteps < 0)) fail("warmupSteps", "must be a non-negative integer");
  const { min, max } = MAX_SEQ_LENGTH_RANGE;
  if (config.maxSeqLength !== undefined && (!Number.isInteger(config.maxSeqLength) || config.maxSeqLength < min || config.maxSeqLength > max)) {
    fail("maxSeqLength", `must be an integer from ${min} to ${max}`);
  }
  if (config.evalSteps !== undefined && config.evalDataset === undefined) fail("evalSteps", "needs evalDataset");
  const backend = config.backend ?? backendFromEnvironment();
  if (backend !== undefined && !(TRAINING_BACKENDS as readonly string[]).includes(backend)) {
    fail(config.backend !== undefined ? "backend" : "backend (from SVC_TRAIN_BACKEND)", `must be one of ${TRAINING_BACKENDS.join(", ")}, got "${backend}"`);
  }
  const lora = config.lora ?? {};
  positiveInt("lora.r", lora.r, 256);
  if (lora.alpha !== undefined && !(lora.alpha > 0)) fail("lora.alpha", "must be a positive number");
  if (lora.targetModules !== undefined) {
    if (!Array.isArray(lora.targetModules) || lora.targetModules.length === 0) fail("lora.targetModules", "must be a non-empty array");
    for (const m of lora.targetModules) {
      if (!(LORA_TARGET_MODULES as readonly string[]).includes(m)) fail("lora.targetModules", `has "${m}"; choose from ${LORA_TARGET_MODULES.join(", ")}`);
    }
  }
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
    lora: { r: lora.r ?? 8, alpha: lora.alpha ?? 16, targetModules: lora.targetModules ?? [...LORA_TARGET_MODULES] },
  };
}

/** SVC_TRAIN_BACKEND of the process that creates the trainer (`SVC_TRAIN_BACKEND=torch npx svc start`). */
function backendFromEnvironment(): TrainingBackend | undefined {
  const value = typeof process === "undefined" ? undefined : process.env.SVC_TRAIN_BACKEND?.trim();
  return value ? (value as TrainingBackend) : undefined;
}
