/**
 * The adapters a job offers for download, read from its artifact list: the final adapter and each
 * checkpoint, with what each format weighs. The names are the ones a worker uploads under
 * (`adapterArtifactNames`, sdk/api/jobs.ts), so an old job without PEFT files offers GGUF only.
 */
import { adapterArtifactNames } from "../sdk/api/jobs.js";
import type { Artifact } from "../sdk/wire.js";

export interface AdapterOffer {
  /** Undefined for the final adapter, else the checkpoint's step. */
  step?: number;
  /** "Final adapter (step 60)", "Checkpoint, step 40". */
  label: string;
  ggufBytes: number;
  /** The PEFT pair's bytes (the zip adds a few hundred); null when the job has no PEFT files for it. */
  peftBytes: number | null;
}

/** The final adapter first, then the checkpoints before it, latest first. */
export function adapterOffers(artifacts: readonly Artifact[]): AdapterOffer[] {
  const sizes = new Map(artifacts.map((a) => [a.name, a.sizeBytes]));
  const offer = (step: number | undefined, label: string): AdapterOffer | null => {
    const names = adapterArtifactNames(step);
    const gguf = sizes.get(names.gguf);
    if (gguf === undefined) return null;
    const [weights, config] = [sizes.get(names.weights), sizes.get(names.config)];
    return {
      ...(step === undefined ? {} : { step }),
      label,
      ggufBytes: gguf,
      peftBytes: weights !== undefined && config !== undefined ? weights + config : null,
    };
  };
  const final = artifacts.find((a) => a.kind === "adapter");
  // A checkpoint saved at the last step holds the final adapter's weights: offered once, as the final adapter.
  const checkpoints = [...new Set(artifacts.filter((a) => a.kind === "checkpoint" && a.step !== final?.step).map((a) => a.step))].sort((a, b) => b - a);
  return [final ? offer(undefined, `Final adapter (step ${final.step})`) : null, ...checkpoints.map((step) => offer(step, `Checkpoint, step ${step}`))].filter(
    (o): o is AdapterOffer => o !== null,
  );
}

/** The weight types a merged export offers, in the order the job page lists them. */
export const MERGED_QUANTS = ["q8_0", "f16", "q4_k_m"] as const;
export type MergedQuant = (typeof MERGED_QUANTS)[number];

/** Bits per weight of each type (llama.cpp's block sizes; Q4_K_M mixes Q4_K and Q6_K, about 4.9). */
const BITS_PER_WEIGHT: Record<MergedQuant, number> = { q8_0: (34 * 8) / 32, f16: 16, q4_k_m: 4.9 };

/** About how large a merged export of a base with `parameters` weights is, before it is written; undefined when the count is unknown. */
export function mergedSizeEstimate(parameters: number | null | undefined, quant: MergedQuant): number | undefined {
  if (typeof parameters !== "number" || parameters <= 0) return undefined;
  return Math.round((parameters * BITS_PER_WEIGHT[quant]) / 8);
}

/** What the job page's Export writes: `svc export`'s formats. */
export const EXPORT_FORMATS = [
  { format: "gguf-merged", label: "Merged GGUF" },
  { format: "ollama", label: "Ollama" },
  { format: "lmstudio", label: "LM Studio" },
  { format: "peft", label: "PEFT" },
] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number]["format"];

/** Whether a format merges the adapter into the base, so takes a weight type (Ollama keeps the base as it is). */
export const exportTakesQuant = (format: ExportFormat): boolean => format === "gguf-merged" || format === "lmstudio";

/**
 * About how many bytes an export writes, before it is written: the merged weights' estimate for a merged GGUF or LM
 * Studio, the base file plus the adapter for Ollama (which ships both), the PEFT pair; undefined where a size is unknown.
 */
export function exportSizeEstimate(
  format: ExportFormat,
  facts: { parameters?: number | null; baseBytes?: number | null; quant: MergedQuant; offer?: Pick<AdapterOffer, "ggufBytes" | "peftBytes"> },
): number | undefined {
  switch (format) {
    case "gguf-merged":
    case "lmstudio":
      return mergedSizeEstimate(facts.parameters, facts.quant);
    case "ollama":
      return typeof facts.baseBytes === "number" && facts.offer ? facts.baseBytes + facts.offer.ggufBytes : undefined;
    case "peft":
      return facts.offer?.peftBytes ?? undefined;
  }
}

/**
 * What the Export row says once a file is saved: where it went, and for Ollama and LM Studio what to do next. A
 * browser gets a zip (`name`); VS Code unpacks it into the folder the user chose (`path`). Ollama's model is named as
 * `svc export` names it (the job's file stem, lower case), from `<stem>[-step-N]-ollama[.zip]`; the studio does not
 * run `ollama create` itself, the user does where the files are.
 */
export function exportSavedText(format: ExportFormat, saved: { name: string; path?: string }): { text: string; command?: string } {
  const where = saved.path ? `Saved ${saved.path}.` : `Downloaded ${saved.name}.`;
  const folder = saved.path !== undefined;
  switch (format) {
    case "ollama": {
      const model = saved.name
        .replace(/\.zip$/i, "")
        .replace(/-ollama$/, "")
        .replace(/-step-\d+$/, "")
        .toLowerCase();
      return { text: `${where} ${folder ? "In that folder" : "Unzip it, then in its folder"} run:`, command: `ollama create ${model} -f Modelfile` };
    }
    case "lmstudio":
      return {
        text: folder
          ? `${where} LM Studio lists the model under svc/ when that is its models folder.`
          : `${where} Unzip it into LM Studio's models folder (~/.lmstudio/models by default).`,
      };
    default:
      return { text: where };
  }
}
