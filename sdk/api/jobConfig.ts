/**
 * A job's trainer configuration as `POST /v1/jobs` takes it and `Job.config` returns it: what createTrainer sends
 * (defaults filled in, paths removed). One TypeBox schema, each field with its rule, its message what the field must
 * be; sdk/trainer/config.ts lists every problem against it at once, for createTrainer, the cloud and the worker.
 */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";

/**
 * The models shipped with svc (always registered, always trainable). Any other registered GGUF
 * of a trainable architecture (llama, qwen2, qwen3; gemma3 and gemma4 on the torch backend) can be trained too: `svc models add FILE.gguf`,
 * then `model: "<its name>"`; `svc start` checks the name against the cloud before uploading.
 */
export const SUPPORTED_MODELS = ["svc-tiny"] as const;

/** Bounds of maxSeqLength: below 16 tokens a chat template alone does not fit; above 32768 no GPU here holds the activations. */
export const MAX_SEQ_LENGTH_RANGE = { min: 16, max: 32768 } as const;

export const LORA_TARGET_MODULES = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"] as const;

/** The eval metrics early stopping and "best checkpoint" can go by: lower eval loss, or higher eval token accuracy. */
export const EVAL_METRICS = ["evalLoss", "evalTokenAccuracy"] as const;
export type EvalMetric = (typeof EVAL_METRICS)[number];

export const QUANTIZED_BASE_CHOICES = ["keep", "dequantize"] as const;
export type QuantizedBase = (typeof QUANTIZED_BASE_CHOICES)[number];

export const TRAINING_DTYPES = ["auto", "float32", "bfloat16"] as const;
export type TrainingDtype = (typeof TRAINING_DTYPES)[number];

export const TRAINING_BACKENDS = ["auto", "torch", "tfjs"] as const;
export type TrainingBackend = (typeof TRAINING_BACKENDS)[number];

export const BUILT_IN_GRADERS = ["exact", "contains", "regex", "json_valid", "json_schema"] as const;
/** A custom grader's name: the column of its grades. */
export const GRADER_NAME_PATTERN = "^[A-Za-z0-9_.-]{1,40}$";

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const integer = (minimum: number, maximum: number, errorMessage: string) => T.Optional(T.Integer({ minimum, maximum, errorMessage }));
const oneOf = <V extends string>(values: readonly V[], errorMessage: string) =>
  T.Union(
    values.map((value) => T.Literal(value)),
    { errorMessage },
  );
/** `{value}` in a rule: the value given, as JSON. */
const chosenFrom = <V extends string>(values: readonly V[]) => oneOf(values, `must be one of ${values.join(", ")}, got {value}`);

/** A grader as the job config carries it: a built-in whole, a custom one by name (its function stays with the trainer). */
export const JobGrader = T.Union([
  T.Object({ type: T.Literal("exact") }),
  T.Object({ type: T.Literal("contains") }),
  T.Object({ type: T.Literal("regex"), pattern: T.String(), flags: T.Optional(T.String()) }),
  T.Object({ type: T.Literal("json_valid") }),
  // Any JSON Schema the user writes: graders.ts compiles it with Ajv, the only check that can tell a valid one.
  T.Object({ type: T.Literal("json_schema"), schema: T.Record(T.String(), T.Unknown()) }),
  T.Object({ type: T.Literal("custom"), name: T.String({ pattern: GRADER_NAME_PATTERN }) }),
]);

/**
 * Each field's rule; absent fields take the trainer's defaults. Property order is the order problems are listed in.
 * Graders are declared here and checked by sdk/trainer/graders.ts, which also compiles their patterns and schemas.
 */
export const JobConfig = T.Object({
  name: T.Optional(T.String({ maxLength: 120, pattern: "\\S", errorMessage: "must be 1 to 120 characters" })),
  model: T.Optional(T.String({ pattern: "\\S", errorMessage: `must name a registered base model, e.g. "${SUPPORTED_MODELS[0]}"` })),
  maxSteps: integer(1, 1_000_000, "must be an integer from 1 to 1000000"),
  numTrainEpochs: T.Optional(T.Number({ exclusiveMinimum: 0, maximum: 1000, errorMessage: "must be a number above 0 and at most 1000" })),
  learningRate: T.Optional(T.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, errorMessage: "must be a number between 0 and 1" })),
  batchSize: integer(1, 1024, "must be an integer from 1 to 1024"),
  // 0 turns evaluation off (what createTrainer sends when evalSteps is unset).
  evalSteps: integer(0, 1_000_000, "must be an integer from 0 to 1000000"),
  saveSteps: integer(0, MAX_SAFE, "must be a non-negative integer"),
  seed: integer(-MAX_SAFE, MAX_SAFE, "must be an integer"),
  schedule: T.Optional(oneOf(["cosine", "linear"], 'must be "cosine" or "linear"')),
  warmupSteps: integer(0, MAX_SAFE, "must be a non-negative integer"),
  maxSeqLength: integer(
    MAX_SEQ_LENGTH_RANGE.min,
    MAX_SEQ_LENGTH_RANGE.max,
    `must be an integer from ${MAX_SEQ_LENGTH_RANGE.min} to ${MAX_SEQ_LENGTH_RANGE.max}`,
  ),
  backend: T.Optional(chosenFrom(TRAINING_BACKENDS)),
  dtype: T.Optional(chosenFrom(TRAINING_DTYPES)),
  gradientCheckpointing: T.Optional(T.Union([T.Boolean(), T.Literal("auto")], { errorMessage: 'must be true, false or "auto"' })),
  quantizedBase: T.Optional(chosenFrom(QUANTIZED_BASE_CHOICES)),
  lora: T.Optional(
    T.Object(
      {
        r: integer(1, 256, "must be an integer from 1 to 256"),
        alpha: T.Optional(T.Number({ exclusiveMinimum: 0, errorMessage: "must be a positive number" })),
        targetModules: T.Optional(
          T.Array(oneOf(LORA_TARGET_MODULES, `has {value}; choose from ${LORA_TARGET_MODULES.join(", ")}`), {
            minItems: 1,
            errorMessage: "must be a non-empty array",
          }),
        ),
      },
      { errorMessage: "must be an object" },
    ),
  ),
  earlyStopping: T.Optional(
    T.Object(
      {
        patience: T.Integer({ minimum: 1, maximum: 1000, errorMessage: "must be an integer from 1 to 1000" }),
        metric: T.Optional(oneOf(EVAL_METRICS, `must be ${EVAL_METRICS.map((m) => `"${m}"`).join(" or ")}`)),
      },
      { errorMessage: "must be an object: { metric, patience }" },
    ),
  ),
  samples: T.Optional(
    T.Object(
      {
        count: integer(0, 64, "must be an integer from 0 to 64"),
        maxTokens: integer(1, 2048, "must be an integer from 1 to 2048"),
      },
      { errorMessage: "must be an object: { count, maxTokens }" },
    ),
  ),
  graders: T.Optional(T.Array(JobGrader)),
});
export type JobConfig = Static<typeof JobConfig>;
