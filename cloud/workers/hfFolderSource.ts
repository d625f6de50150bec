/**
 * Whether a job trains from its base model's Hugging Face folder (the safetensors, read by the
 * torch backend's transformers) or from the GGUF converted from it. The folder is a path on the
 * cloud's machine, referenced in place: only the cloud's own workers (shared files) can read it,
 * and a folder moved or deleted since `svc models add` leaves the converted GGUF to train from.
 */
import { access } from "node:fs/promises";
import path from "node:path";
import type { CloudMessage } from "./protocol.js";

type AssignedModel = Extract<CloudMessage, { type: "assign" }>["model"];

/** `folder` to train from, or none, with the one line a job's log shows when a folder was not used. */
export async function hfFolderToTrain(model: AssignedModel, sharedFiles: boolean): Promise<{ folder?: string; notice?: string }> {
  if (!model.hfFolder) return {};
  if (!sharedFiles)
    return {
      notice: `this worker is not on the cloud's machine: it trains ${model.name} from its converted GGUF, not from the Hugging Face folder's safetensors`,
    };
  try {
    await access(path.join(model.hfFolder, "config.json"));
    return { folder: model.hfFolder };
  } catch {
    return { notice: `the Hugging Face folder ${model.hfFolder} of ${model.name} is gone (moved or deleted): training from the GGUF converted from it` };
  }
}
