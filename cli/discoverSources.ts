/**
 * Where GGUF files usually are on a machine, and the name each place suggests for them:
 *
 *   LM Studio       ~/.lmstudio/models/**, ~/.cache/lm-studio/models/**        file stem
 *   Hugging Face    ${HF_HUB_CACHE:-${HF_HOME:-~/.cache/huggingface}/hub}
 *                   /models--ORG--NAME/snapshots/REV/**.gguf                   file stem
 *                   /models--ORG--NAME/snapshots/REV/ with config.json and
 *                   *.safetensors (a checkpoint, converted when added)         ORG/NAME
 *   Ollama          ${OLLAMA_MODELS:-~/.ollama/models}/manifests/HOST/NS/NAME/TAG
 *                   → the layer of mediaType application/vnd.ollama.image.model
 *                   → blobs/sha256-HEX (a GGUF without extension)          NAME:TAG
 *   SVC_MODEL_PATHS extra folders or files, separated like PATH            file stem
 */
import { readdir, readFile, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { findGgufFiles } from "./discoverWalk.js";

export type DiscoverySource = "lmstudio" | "huggingface" | "ollama" | "SVC_MODEL_PATHS";

export interface Candidate {
  source: DiscoverySource;
  path: string;
  /** The name the place itself uses (Ollama's NAME:TAG) or the file stem; made valid and unique later. */
  name: string;
  /** A GGUF file, or a Hugging Face checkpoint folder. */
  kind?: "gguf" | "hf-folder";
}

export interface CandidateScan {
  candidates: Candidate[];
  /** Things found but not usable (a manifest without its blob), one readable line each. */
  notes: string[];
}

export type Env = Record<string, string | undefined>;

const OLLAMA_MODEL_LAYER = "application/vnd.ollama.image.model";
const OLLAMA_DEFAULT_HOST = "registry.ollama.ai";
const OLLAMA_DEFAULT_NAMESPACE = "library";

/** Every candidate of every place, in a fixed order: LM Studio, Hugging Face, Ollama, SVC_MODEL_PATHS. */
export async function scanCandidates(env: Env = process.env): Promise<CandidateScan> {
  const home = env.HOME || os.homedir();
  const notes: string[] = [];
  const candidates: Candidate[] = [];
  for (const root of lmStudioRoots(home)) candidates.push(...(await fileCandidates(root, "lmstudio")));
  candidates.push(...(await huggingFaceCandidates(huggingFaceHubDir(env, home))));
  const ollama = await ollamaCandidates(ollamaModelsDir(env, home));
  candidates.push(...ollama.candidates);
  notes.push(...ollama.notes);
  for (const root of extraRoots(env)) candidates.push(...(await fileCandidates(root, "SVC_MODEL_PATHS")));
  return { candidates, notes };
}

export function lmStudioRoots(home: string): string[] {
  return [path.join(home, ".lmstudio", "models"), path.join(home, ".cache", "lm-studio", "models")];
}

export function huggingFaceHubDir(env: Env, home: string): string {
  if (env.HF_HUB_CACHE) return env.HF_HUB_CACHE;
  return path.join(env.HF_HOME || path.join(home, ".cache", "huggingface"), "hub");
}

export function ollamaModelsDir(env: Env, home: string): string {
  return env.OLLAMA_MODELS || path.join(home, ".ollama", "models");
}

/** SVC_MODEL_PATHS split like PATH (":" here, ";" on Windows), empty entries dropped. */
export function extraRoots(env: Env): string[] {
  return (env.SVC_MODEL_PATHS ?? "").split(path.delimiter).filter((p) => p.trim().length > 0);
}

async function fileCandidates(root: string, source: DiscoverySource): Promise<Candidate[]> {
  return (await findGgufFiles(root)).map((file) => ({ source, path: file, name: path.basename(file).replace(/\.gguf$/i, "") }));
}

/** Only the snapshots of model repositories: blobs/ holds the same bytes under hash names. */
async function huggingFaceCandidates(hub: string): Promise<Candidate[]> {
  const repos = (await readdir(hub).catch(() => [] as string[])).filter((name) => name.startsWith("models--")).sort();
  const found: Candidate[] = [];
  for (const repo of repos) {
    const snapshots = path.join(hub, repo, "snapshots");
    found.push(...(await fileCandidates(snapshots, "huggingface")));
    const checkpoint = await newestCheckpoint(snapshots);
    if (checkpoint) found.push({ source: "huggingface", path: checkpoint, name: repo.slice("models--".length).replace("--", "/"), kind: "hf-folder" });
  }
  return found;
}

/** The newest snapshot that is a transformers checkpoint (config.json and safetensors weights). */
async function newestCheckpoint(snapshots: string): Promise<string | undefined> {
  const folders = await readdir(snapshots).catch(() => [] as string[]);
  let best: { path: string; mtime: number } | undefined;
  for (const name of folders) {
    const dir = path.join(snapshots, name);
    const files = await readdir(dir).catch(() => [] as string[]);
    if (!files.includes("config.json") || !files.some((f) => f.endsWith(".safetensors"))) continue;
    const mtime = (await stat(dir)).mtimeMs;
    if (!best || mtime > best.mtime) best = { path: dir, mtime };
  }
  return best?.path;
}

/** manifests/HOST/NAMESPACE/NAME/TAG; the library's models are named NAME:TAG as `ollama list` shows them. */
async function ollamaCandidates(modelsDir: string): Promise<CandidateScan> {
  const manifests = path.join(modelsDir, "manifests");
  const candidates: Candidate[] = [];
  const notes: string[] = [];
  for (const host of await subdirs(manifests)) {
    for (const namespace of await subdirs(path.join(manifests, host))) {
      for (const model of await subdirs(path.join(manifests, host, namespace))) {
        const tagsDir = path.join(manifests, host, namespace, model);
        for (const tag of (await readdir(tagsDir).catch(() => [] as string[])).sort()) {
          const display = ollamaName(host, namespace, model, tag);
          const manifestPath = path.join(tagsDir, tag);
          const blob = await ollamaModelBlob(modelsDir, manifestPath);
          if (typeof blob === "string") candidates.push({ source: "ollama", path: blob, name: `${model}:${tag}` });
          else notes.push(`skipped ollama ${display}: ${blob.problem}`);
        }
      }
    }
  }
  return { candidates, notes };
}

/** How `ollama list` names it: "qwen3:0.6b", "user/model:tag", "hf.co/org/repo:tag". */
function ollamaName(host: string, namespace: string, model: string, tag: string): string {
  const parts = [host === OLLAMA_DEFAULT_HOST ? null : host, host === OLLAMA_DEFAULT_HOST && namespace === OLLAMA_DEFAULT_NAMESPACE ? null : namespace, model];
  return `${parts.filter(Boolean).join("/")}:${tag}`;
}

/** The model layer's blob path, or why there is none. */
async function ollamaModelBlob(modelsDir: string, manifestPath: string): Promise<string | { problem: string }> {
  let manifest: { layers?: { mediaType?: string; digest?: string }[] };
  try {
    manifest = JSON.parse(await readFile(manifestPath, "utf8"));
  } catch (err) {
    return { problem: `manifest ${manifestPath} is not readable JSON (${(err as Error).message})` };
  }
  const layer = manifest.layers?.find((l) => l.mediaType === OLLAMA_MODEL_LAYER);
  const digest = /^sha256[:-]([0-9a-f]{64})$/.exec(layer?.digest ?? "");
  if (!digest) return { problem: `manifest ${manifestPath} has no model layer` };
  const blob = path.join(modelsDir, "blobs", `sha256-${digest[1]}`);
  const info = await stat(blob).catch(() => null);
  if (!info?.isFile()) return { problem: `its model blob ${blob} is missing` };
  return blob;
}

async function subdirs(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries
    .filter((e) => e.isDirectory() && !e.name.startsWith("."))
    .map((e) => e.name)
    .sort();
}
