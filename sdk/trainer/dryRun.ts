/**
 * A trainer's dry run: everything `svc start` would check before it uploads, and what the run would
 * cost, with nothing uploaded and no job created. The datasets are validated (line numbers) and
 * tokenized with the model's own tokenizer, the step plan is made as the trainer makes it, and the
 * duration is timed on the backend this machine would train on (stepTiming.ts).
 *
 * The cloud is only asked which models exist (a read; no project scope is created). The model's
 * tokenizer and weights come from its GGUF: the package's own file for svc-tiny, or the file the
 * caller names (`modelFile`) for a model registered with `svc models add`, whose path is known to
 * the cloud's machine only.
 */
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { SVC_TINY } from "../../engine/model/config.js";
import type { ChatTokenizer } from "../../engine/data/chat-tokenizer.js";
import type { CloudClient } from "../client.js";
import { packageRoot } from "../packageRoot.js";
import type { BaseModel } from "../wire.js";
import type { JobTrainingConfig } from "./config.js";
import { inspectSplit, type InspectedSplit } from "./datasetStats.js";
import type { DryRunEstimate, DryRunReport } from "./dryRunReport.js";
import { checkTrainerModel, effectiveMaxSeqLength } from "./modelCheck.js";

export interface DryRunOptions {
  /** The base model's GGUF on this machine; needed for models other than svc-tiny (whose file ships with svc). */
  modelFile?: string;
  /**
   * A preview of the datasets (`svc start --dry-run --preview`, the studio's Datasets view): each split adds every
   * conversation's length, its first conversations and every problem with its line; no steps are timed.
   */
  preview?: boolean;
}

export interface DryRunInput {
  config: JobTrainingConfig;
  projectDir: string;
  dataset: string;
  evalDataset?: string;
  /** An unscoped client: the dry run only lists models. */
  client: CloudClient;
}

/** The GGUF the dry run reads: the one given, else the package's own file for a shipped model. */
function modelFileFor(model: BaseModel, given: string | undefined, projectDir: string): string | null {
  if (given) return path.resolve(projectDir, given);
  const shipped = path.join(packageRoot(), "models", `${model.name}.gguf`);
  return model.name === SVC_TINY.name && existsSync(shipped) ? shipped : null;
}

function describeTokenizer(model: string, tokenizer: ChatTokenizer): string {
  if (tokenizer.templateSource === "svc") return `${model}'s byte tokenizer (1 token = 1 byte)`;
  if (tokenizer.templateSource === "gguf") return `${model}'s own tokenizer and chat template`;
  return `${model}'s own tokenizer and the ChatML template (the GGUF has no chat template)`;
}

async function readDatasetText(projectDir: string, file: string, field: string): Promise<string> {
  const full = path.resolve(projectDir, file);
  try {
    return await readFile(full, "utf8");
  } catch {
    throw new Error(`${field}: cannot read ${full}`);
  }
}

export async function dryRun(input: DryRunInput, options: DryRunOptions = {}): Promise<DryRunReport> {
  const { config, projectDir } = input;
  const trainText = await readDatasetText(projectDir, input.dataset, "dataset");
  const evalText = input.evalDataset ? await readDatasetText(projectDir, input.evalDataset, "evalDataset") : null;
  // An unknown or serve-only model is the same error svc start gives, before anything else.
  const model = checkTrainerModel(config, await input.client.listModels());
  const modelFile = modelFileFor(model, options.modelFile, projectDir);
  const maxSeqLength = effectiveMaxSeqLength(config, model) ?? null;

  let tokenizer: ChatTokenizer | undefined;
  let modelConfig;
  if (modelFile) {
    const { loadModelChatTokenizer } = await import("../../engine/data/model-chat-tokenizer.js");
    const { readTrainableModelConfig } = await import("../../engine/gguf/model-file.js");
    modelConfig = await readTrainableModelConfig(modelFile);
    tokenizer = await loadModelChatTokenizer(modelFile);
  }
  try {
    const limit = maxSeqLength ?? undefined;
    const preview = options.preview === true;
    const train = inspectSplit({ split: "train", file: input.dataset, text: trainText, tokenizer, maxSeqLength: limit, preview });
    const evalSplit: InspectedSplit | null =
      evalText !== null ? inspectSplit({ split: "eval", file: input.evalDataset!, text: evalText, tokenizer, maxSeqLength: limit, preview }) : null;
    const splits = [train, ...(evalSplit ? [evalSplit] : [])];
    const ok = splits.every((s) => s.report.errors.length === 0);

    let plan: DryRunReport["plan"] = null;
    let estimate: DryRunEstimate;
    if (!tokenizer || !modelConfig) {
      estimate = {
        available: false,
        blocking: false,
        reason: `${model.name}'s GGUF is on the cloud's machine; pass its path (svc start --dry-run --model-file FILE.gguf) to count tokens and time steps`,
      };
    } else if (train.rendered.length === 0) {
      estimate = { available: false, blocking: false, reason: "the training set has no valid conversation" };
    } else {
      const { planRun } = await import("./dryRunPlan.js");
      const fullPlan = planRun({
        trainLengths: train.rendered.map((e) => e.ids.length),
        evalLengths: (evalSplit?.rendered ?? []).map((e) => e.ids.length),
        batchSize: config.batchSize,
        maxSteps: config.maxSteps,
        numTrainEpochs: config.numTrainEpochs,
        seed: config.seed,
        evalSteps: config.evalSteps,
      });
      const { evalPaddedTokens: _evalPadded, ...shown } = fullPlan;
      plan = shown;
      if (preview) estimate = { available: false, blocking: false, reason: "a preview times no steps (svc start --dry-run does)" };
      else {
        const { measureEstimate } = await import("./stepTiming.js");
        estimate = await measureEstimate({
          modelFile: modelFile!,
          modelConfig,
          config,
          train: train.rendered,
          eval: evalSplit?.rendered ?? [],
          plan: fullPlan,
          padId: tokenizer.padId,
        });
      }
    }
    return {
      trainer: config.name,
      model: model.name,
      tokenizer: tokenizer ? describeTokenizer(model.name, tokenizer) : null,
      maxSeqLength,
      contextLength: model.contextLength ?? null,
      splits: splits.map((s) => s.report),
      plan,
      estimate,
      ok: ok && (estimate.available || !estimate.blocking),
    };
  } finally {
    await tokenizer?.dispose();
  }
}
