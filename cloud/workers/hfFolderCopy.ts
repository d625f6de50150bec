/**
 * A remote worker's copy of a Hugging Face model's folder (the files the cloud lists in the
 * assignment), kept in its model cache beside the GGUF copies under the sha256 of that list. The
 * files are fetched into a folder of their own, each checked against its sha256, and the folder is
 * renamed into place only when all are: a copy under its final name is always complete, and the
 * next job on the same content reuses it without fetching anything.
 */
import { randomBytes } from "node:crypto";
import { promises as fs } from "node:fs";
import path from "node:path";
import { fetchToFile, modelCacheBytes, pruneModelCache } from "./baseModelCache.js";
import { hfCopyName, type HfFiles } from "./hfManifest.js";

export interface HfCopySource {
  cacheDir: string;
  token: string;
  /** A URL the cloud sent, as this worker reaches the cloud. */
  reach: (url: string) => string;
  /** Copies the job uses besides this one (its GGUF): kept when the cache is pruned. */
  alsoKeep: string[];
  log: (line: string) => void;
  cacheBytes?: number;
}

/** The folder of a complete copy, and whether it was fetched now (false: an earlier job's copy). */
export async function hfFolderCopy(modelName: string, hfFiles: HfFiles, source: HfCopySource): Promise<{ folder: string; fetched: boolean }> {
  const folder = hfCopyPath(source.cacheDir, hfFiles);
  if (await isComplete(folder, hfFiles)) {
    const now = new Date();
    await fs.utimes(folder, now, now); // the cache forgets the least recently trained first
    return { folder, fetched: false };
  }
  await fs.rm(folder, { recursive: true, force: true }); // a copy whose files were removed by hand
  const part = `${folder}.part-${randomBytes(6).toString("hex")}`;
  await fs.mkdir(part, { recursive: true });
  try {
    for (const file of hfFiles.files) {
      const what = `${file.name} of the Hugging Face model ${modelName}`;
      const sha256 = await fetchToFile(source.reach(`${hfFiles.url}${encodeURIComponent(file.name)}`), source.token, path.join(part, file.name), what);
      if (sha256 !== file.sha256) throw new Error(`${what} does not have the sha256 the cloud listed (got ${sha256}, expected ${file.sha256})`);
    }
    await fs.rename(part, folder).catch(async (err: NodeJS.ErrnoException) => {
      // Another worker sharing this cache finished the same copy first: theirs is as good.
      if (!(err.code === "ENOTEMPTY" || err.code === "EEXIST") || !(await isComplete(folder, hfFiles))) throw err;
      await fs.rm(part, { recursive: true, force: true });
    });
  } catch (err) {
    await fs.rm(part, { recursive: true, force: true });
    throw err;
  }
  const removed = await pruneModelCache(source.cacheDir, [folder, ...source.alsoKeep], source.cacheBytes ?? modelCacheBytes());
  if (removed.length > 0) source.log(`removed ${removed.length} older base model copies to keep the cache under its size (SVC_WORKER_MODEL_CACHE_GB)`);
  return { folder, fetched: true };
}

/** Where the copy of these files lives (whether or not it is there yet). */
export function hfCopyPath(cacheDir: string, hfFiles: HfFiles): string {
  return path.join(cacheDir, hfCopyName(hfFiles.files));
}

/** The copy is there with every listed file at its listed size (its content was checked when it was fetched). */
async function isComplete(folder: string, hfFiles: HfFiles): Promise<boolean> {
  for (const file of hfFiles.files) {
    const stat = await fs.stat(path.join(folder, file.name)).catch(() => null);
    if (stat?.size !== file.bytes) return false;
  }
  return true;
}
