/**
 * How a base model's facts read to people, in one place so the CLI table, the studio's pickers
 * and VS Code's quick pick say the same thing: `my-qwen · qwen3 · 0.6B · Q4_K_M · ctx 40960`.
 * Pure functions only: the webview bundles this file.
 */
import type { BaseModel } from "./wire.js";

/** The word for a model svc can deploy but not fine-tune. */
export const SERVE_ONLY = "serve only";

/**
 * A parameter count the way model cards round it: "135M", "360M", "0.5B" (494M), "0.6B",
 * "1.2B", "8B", "70B". From about half a billion on, billions read better than "596M".
 */
export function formatParameterCount(count: number): string {
  if (!Number.isFinite(count) || count < 0) return "?";
  if (count >= 450e6) return `${scaled(count / 1e9)}B`;
  if (count >= 1e6) return `${scaled(count / 1e6)}M`;
  if (count >= 1e3) return `${scaled(count / 1e3)}K`;
  return String(Math.round(count));
}

/** One decimal below 10 ("1.2", "0.6"), none from 10 on ("135"); a trailing ".0" is dropped. */
function scaled(value: number): string {
  return value >= 10 ? String(Math.round(value)) : String(Number(value.toFixed(1)));
}

/** File sizes in the units people see in their file manager: "1.8 MB", "397 MB", "4.7 GB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "?";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value >= 100 ? Math.round(value) : Number(value.toFixed(1))} ${units[unit]}`;
}

/** The facts after the name, each only when known: `qwen3 · 0.6B · Q4_K_M · ctx 40960`. */
export function modelFactParts(model: Pick<BaseModel, "source" | "architecture" | "parameters" | "quantization" | "contextLength">): string[] {
  if (model.source === "upstream") return ["upstream server"];
  const parts: string[] = [];
  if (model.architecture) parts.push(model.architecture);
  if (model.parameters !== null && model.parameters !== undefined) parts.push(formatParameterCount(model.parameters));
  if (model.quantization) parts.push(model.quantization);
  if (model.contextLength) parts.push(`ctx ${model.contextLength}`);
  return parts;
}

/** The compact one-liner of the pickers; serve-only models say so at the end. */
export function modelSummary(model: BaseModel): string {
  return [model.name, ...modelFactParts(model), ...(model.trainable ? [] : [SERVE_ONLY])].join(" · ");
}

/** "trainable" or "serve only". */
export function trainingLabel(model: Pick<BaseModel, "trainable">): string {
  return model.trainable ? "trainable" : SERVE_ONLY;
}
