/**
 * The check `svc start` makes before uploading anything: the trainer's model must be registered
 * with the cloud and trainable, and maxSeqLength must fit its context. createTrainer cannot know
 * this (it runs while the manifest is read, offline); the cloud checks the same on job creation.
 */
import type { BaseModel } from "../wire.js";
import type { JobTrainingConfig } from "./config.js";

/** Thrown by `svc start`; the message is printed as is, so it names the field and what would work. */
export class TrainerModelError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TrainerModelError";
  }
}

/** The registered model the config names, or a TrainerModelError saying why it cannot be trained. */
export function checkTrainerModel(config: Pick<JobTrainingConfig, "model" | "maxSeqLength">, models: readonly BaseModel[]): BaseModel {
  const model = models.find((m) => m.name === config.model);
  if (!model) {
    const trainable = models.filter((m) => m.trainable).map((m) => m.name);
    throw new TrainerModelError(
      `model: "${config.model}" is not registered with the cloud; trainable models: ${trainable.join(", ") || "none"}. ` +
        "Register a GGUF with: svc models add FILE.gguf (see svc models discover)",
    );
  }
  if (!model.trainable)
    throw new TrainerModelError(`model: "${model.name}" can be served but not trained: ${model.notTrainableReason ?? "svc cannot train it"}`);
  if (config.maxSeqLength !== undefined && model.contextLength && config.maxSeqLength > model.contextLength) {
    throw new TrainerModelError(`maxSeqLength: ${config.maxSeqLength} is longer than the context of "${model.name}" (${model.contextLength} tokens)`);
  }
  return model;
}

/** The sequence limit the worker will train with: maxSeqLength, else the smaller of the model's context and 1024. */
export function effectiveMaxSeqLength(config: Pick<JobTrainingConfig, "maxSeqLength">, model: Pick<BaseModel, "contextLength">): number | undefined {
  if (config.maxSeqLength !== undefined) return config.maxSeqLength;
  return model.contextLength ? Math.min(model.contextLength, 1024) : undefined;
}
