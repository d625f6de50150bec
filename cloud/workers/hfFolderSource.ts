/**
 * Whether a job trains from its base model's Hugging Face folder (the safetensors, read by the
 * torch backend's transformers) or from the GGUF converted from it. The cloud's own workers
 * (shared files) read the folder in place; any other torch worker fetches the files the
 * assignment lists, by sha256, into its model cache (hfFolderCopy.ts). tfjs trains from GGUF
 * files only, so a tfjs job fetches nothing. When the folder cannot be had (moved or deleted on
 * the cloud, a failed or corrupt transfer), the job trains the converted GGUF and says why.
 */
import { access } from "node:fs/promises";
import path from "node:path";
import type { BackendName } from "../../engine/backends/types.js";
import { hfFolderCopy, type HfCopySource } from "./hfFolderCopy.js";
import { parseHfFiles } from "./hfManifest.js";
import type { CloudMessage } from "./protocol.js";

type AssignedModel = Extract<CloudMessage, { type: "assign" }>["model"];

export interface HfFolderWorker {
  /** This worker shares the cloud's machine and files. */
  sharedFiles: boolean;
  /** The backend the job trains on. */
  backend: BackendName;
  /** Where and how a remote worker fetches the files (not needed with shared files). */
  copy?: HfCopySource;
}

/** `folder` to train from, or none, with the one line a job's log shows about the choice. */
export async function hfFolderToTrain(model: AssignedModel, worker: HfFolderWorker): Promise<{ folder?: string; notice?: string }> {
  if (!model.hfFolder) return {};
  if (worker.sharedFiles) {
    try {
      await access(path.join(model.hfFolder, "config.json"));
      return { folder: model.hfFolder };
    } catch {
      return { notice: `the Hugging Face folder ${model.hfFolder} of ${model.name} is gone (moved or deleted): training from the GGUF converted from it` };
    }
  }
  const fallback = `training ${model.name} from its converted GGUF instead`;
  if (worker.backend !== "torch") return { notice: `the ${worker.backend} backend reads no safetensors: ${fallback}` };
  if (!worker.copy) return {};
  if (model.hfFiles === undefined)
    return { notice: `the cloud did not list the files of the Hugging Face folder of ${model.name} (an older cloud): ${fallback}` };
  if (model.hfFiles === null)
    return { notice: `the Hugging Face folder ${model.hfFolder} of ${model.name} is gone on the cloud's machine (moved or deleted): ${fallback}` };
  const parsed = parseHfFiles(model.hfFiles);
  if ("error" in parsed) return { notice: `the cloud's list of the Hugging Face files of ${model.name} is not usable (${parsed.error}): ${fallback}` };
  try {
    const { folder, fetched } = await hfFolderCopy(model.name, parsed.hfFiles, worker.copy);
    const how = fetched ? "fetched by sha256" : "fetched by sha256 for an earlier job";
    return { folder, notice: `training from the Hugging Face safetensors of ${model.name}, ${how} (${parsed.hfFiles.files.length} files in ${folder})` };
  } catch (err) {
    return { notice: `${(err as Error).message}: ${fallback}` };
  }
}
