/**
 * The files of a Hugging Face model's folder that remote workers fetch, with their sizes and
 * sha256. A safetensors file may be many GB: each file is hashed once per content, remembered by
 * its path, size and modification time (to the millisecond, as tools that copy files keep it), so an assignment only stats the folder; a file changed
 * since is hashed again. Two assignments asking at once share one hashing.
 */
import { promises as fs } from "node:fs";
import path from "node:path";
import { isShippedHfFile, type HfFile } from "../workers/hfManifest.js";
import { fileSha256 } from "./fileSha256.js";

const hashes = new Map<string, { key: string; sha256: Promise<string> }>();

/** The folder's shipped files by name (sorted), or null when the folder or its config.json is gone, or a file cannot be read. */
export async function hfFolderManifest(folder: string): Promise<HfFile[] | null> {
  const names = await fs.readdir(folder).catch(() => null);
  if (!names?.includes("config.json")) return null;
  const files: HfFile[] = [];
  try {
    for (const name of names.filter(isShippedHfFile).sort()) {
      const file = path.join(folder, name);
      const stat = await fs.stat(file).catch(() => null);
      if (!stat?.isFile()) continue;
      files.push({ name, bytes: stat.size, sha256: await rememberedSha256(file, `${stat.size}:${Math.trunc(stat.mtimeMs)}`) });
    }
  } catch {
    return null; // the worker trains the converted GGUF and says the folder could not be had
  }
  return files;
}

async function rememberedSha256(file: string, key: string): Promise<string> {
  const known = hashes.get(file);
  if (known?.key === key) return known.sha256;
  const sha256 = fileSha256(file);
  hashes.set(file, { key, sha256 });
  // A failed read is not remembered: the next assignment tries again.
  sha256.catch(() => hashes.get(file)?.sha256 === sha256 && hashes.delete(file));
  return sha256;
}
