/**
 * `svc models discover`: the GGUF files already on this machine (LM Studio, the Hugging Face
 * cache, Ollama, SVC_MODEL_PATHS), each with the facts of its header and a name to register it
 * under. Reading a header is cheap (no weights are read), so every file is inspected; a file that
 * is not a readable GGUF is skipped with a note instead of failing the whole list.
 */
import { realpath } from "node:fs/promises";
import { inspectGguf } from "../engine/gguf/inspect.js";
import { inspectHfFolder } from "../engine/hf/hfFolder.js";
import { scanCandidates, type DiscoverySource, type Env } from "./discoverSources.js";

export interface DiscoveredModel {
  /** Suggested name for `svc models add`, unique within one discovery. */
  name: string;
  source: DiscoverySource;
  path: string;
  sizeBytes: number;
  architecture: string;
  parameters: number;
  quantization: string;
  contextLength: number | null;
  trainable: boolean;
  notTrainableReason: string | null;
}

export interface Discovery {
  models: DiscoveredModel[];
  /** One line per file or manifest skipped, saying why. */
  notes: string[];
}

export async function discoverModels(env: Env = process.env): Promise<Discovery> {
  const { candidates, notes } = await scanCandidates(env);
  const models: DiscoveredModel[] = [];
  const seenFiles = new Set<string>();
  const takenNames = new Set<string>();
  for (const candidate of candidates) {
    // The same bytes reached twice (an SVC_MODEL_PATHS entry inside LM Studio's folder, two
    // snapshots sharing a blob) are listed once, under the first place found.
    const real = await realpath(candidate.path).catch(() => candidate.path);
    if (seenFiles.has(real)) continue;
    seenFiles.add(real);
    let facts;
    try {
      facts = candidate.kind === "hf-folder" ? await checkpointFacts(candidate.path) : await inspectGguf(candidate.path);
    } catch (err) {
      notes.push(`skipped ${candidate.path}: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    const name = uniqueName(validModelName(candidate.name), takenNames);
    takenNames.add(name);
    models.push({
      name,
      source: candidate.source,
      path: candidate.path,
      sizeBytes: facts.sizeBytes,
      architecture: facts.architecture,
      parameters: facts.parameters,
      quantization: facts.quantization,
      contextLength: facts.contextLength ?? null,
      trainable: facts.trainable,
      notTrainableReason: facts.trainable ? null : (facts.notTrainableReason ?? null),
    });
  }
  return { models, notes };
}

/** A Hugging Face checkpoint described like a GGUF (it is converted to one when added). */
async function checkpointFacts(folder: string) {
  const facts = await inspectHfFolder(folder);
  return {
    sizeBytes: facts.weightBytes,
    architecture: facts.architecture,
    parameters: facts.parameters,
    quantization: "safetensors",
    contextLength: facts.contextLength,
    trainable: true,
    notTrainableReason: undefined,
  };
}

/** Fits the cloud's name rule (letters, digits, '.', '_', ':', '-'; at most 80), keeping case. */
export function validModelName(text: string): string {
  const cleaned = text
    .replace(/[^A-Za-z0-9._:-]+/g, "-")
    .replace(/^[^A-Za-z0-9]+/, "")
    .slice(0, 76)
    .replace(/[-.:_]+$/, "");
  return cleaned || "model";
}

/** The first of name, name-2, name-3, ... not yet taken. */
function uniqueName(name: string, taken: Set<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) if (!taken.has(`${name}-${n}`)) return `${name}-${n}`;
}
