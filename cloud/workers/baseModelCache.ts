/**
 * The base model a worker trains. The cloud's own workers (`svc worker --shared-files`, which it
 * starts on its machine) read the cloud's file in place. Every other worker keeps a copy, known by
 * content: the assignment carries the sha256 of the model's file, the copy is named by it, and a
 * model replaced on the cloud has a new sha256, so it is fetched again instead of the old file
 * being trained. A name made only of hex digits is safe on every OS (a model name may hold `:`,
 * which on Windows names an alternate data stream). A Hugging Face model's folder is copied beside
 * them (hfFolderCopy.ts) and counted in the same size.
 */
import { createHash, randomBytes } from "node:crypto";
import { createWriteStream, promises as fs } from "node:fs";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { CloudMessage } from "./protocol.js";
import { stallTimeout, workerStallMs } from "./stallTimeout.js";

type AssignedModel = Extract<CloudMessage, { type: "assign" }>["model"];

export interface BaseModelSource {
  /** The folder the copies live in. */
  cacheDir: string;
  /** This worker shares the cloud's machine and files: read `path` in place. */
  sharedFiles: boolean;
  /** The model's download URL, as this worker reaches the cloud. */
  url: string;
  token: string;
  log: (line: string) => void;
  /** The most the copies may take on disk together; the least recently trained go first (the one in use stays). */
  cacheBytes?: number;
  /** Other copies the job uses (its Hugging Face folder): kept when the cache is pruned. */
  alsoKeep?: string[];
}

/** SVC_WORKER_MODEL_CACHE_GB, else 20 GB: a few laptop-sized bases, not every model the cloud ever had. */
export function modelCacheBytes(env: NodeJS.ProcessEnv = process.env): number {
  const gb = Number(env.SVC_WORKER_MODEL_CACHE_GB);
  return (Number.isFinite(gb) && gb >= 0 && env.SVC_WORKER_MODEL_CACHE_GB !== "" ? gb : 20) * 1e9;
}

const SHA256 = /^[0-9a-f]{64}$/;

/** The GGUF to train from and the sha256 of its content (null when read in place and the cloud did not say). */
export async function resolveBaseModel(model: AssignedModel, source: BaseModelSource): Promise<{ file: string; sha256: string | null }> {
  if (source.sharedFiles && model.path) {
    try {
      await fs.access(model.path);
      return { file: model.path, sha256: model.sha256 };
    } catch {
      // not where the cloud said after all: download it like any other worker
    }
  }
  await fs.mkdir(source.cacheDir, { recursive: true });
  if (model.sha256 && SHA256.test(model.sha256)) {
    const cached = path.join(source.cacheDir, `${model.sha256}.gguf`);
    if (await exists(cached)) {
      const now = new Date();
      await fs.utimes(cached, now, now); // the cache forgets the least recently trained first
      return { file: cached, sha256: model.sha256 };
    }
  }
  const sha256 = await download(model, source);
  if (model.sha256 && sha256 !== model.sha256) {
    // Replaced on the cloud between the assignment and the download: what was downloaded is the model now.
    source.log(`the base model ${model.name} changed on the cloud after this job was assigned; training the current one (sha256 ${sha256})`);
  }
  const file = path.join(source.cacheDir, `${sha256}.gguf`);
  const removed = await pruneModelCache(source.cacheDir, [file, ...(source.alsoKeep ?? [])], source.cacheBytes ?? modelCacheBytes());
  if (removed.length > 0) source.log(`removed ${removed.length} older base model copies to keep the cache under its size (SVC_WORKER_MODEL_CACHE_GB)`);
  return { file, sha256 };
}

/**
 * Deletes the least recently used copies in `dir` (GGUF files and Hugging Face folders) until they
 * take at most `budgetBytes` together, never those in `keep` (what the job is about to train).
 * Returns the copies removed.
 */
export async function pruneModelCache(dir: string, keep: string | readonly string[], budgetBytes: number): Promise<string[]> {
  const kept = new Set((typeof keep === "string" ? [keep] : keep).map((file) => path.resolve(file)));
  const names = (await fs.readdir(dir)).filter((name) => /^[0-9a-f]{64}\.gguf$|^hf-[0-9a-f]{64}$/.test(name));
  const copies = await Promise.all(
    names.map(async (name) => {
      const file = path.join(dir, name);
      const stat = await fs.stat(file);
      return { file, bytes: stat.isDirectory() ? await folderBytes(file) : stat.size, usedAt: stat.mtimeMs };
    }),
  );
  copies.sort((a, b) => b.usedAt - a.usedAt);
  let total = copies.reduce((sum, copy) => sum + copy.bytes, 0);
  const removed: string[] = [];
  for (const copy of copies.reverse()) {
    if (total <= budgetBytes) break;
    if (kept.has(path.resolve(copy.file))) continue;
    await fs.rm(copy.file, { recursive: true, force: true });
    total -= copy.bytes;
    removed.push(copy.file);
  }
  return removed;
}

async function folderBytes(folder: string): Promise<number> {
  const stats = await Promise.all((await fs.readdir(folder)).map((name) => fs.stat(path.join(folder, name))));
  return stats.reduce((sum, stat) => sum + stat.size, 0);
}

/** Streams the model into the cache, hashing it on the way, and names the copy by that hash. */
async function download(model: AssignedModel, source: BaseModelSource): Promise<string> {
  const part = path.join(source.cacheDir, `download-${randomBytes(8).toString("hex")}.part`);
  const sha256 = await fetchToFile(source.url, source.token, part, `the base model ${model.name}`);
  await fs.rename(part, path.join(source.cacheDir, `${sha256}.gguf`));
  return sha256;
}

/**
 * Streams `url` (a worker route, with the worker token) into `file`, hashing it on the way, and
 * returns its sha256. A failed transfer removes what it wrote: a partial file never stays.
 */
export async function fetchToFile(url: string, token: string, file: string, what: string): Promise<string> {
  const hash = createHash("sha256");
  const hashing = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const stall = stallTimeout(workerStallMs(), `downloading ${what}`);
  try {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: stall.signal });
    if (!res.ok || !res.body) throw new Error(`downloading ${what} failed: HTTP ${res.status}`);
    // Streamed to disk: a base model may be larger than this worker's free memory.
    await pipeline(Readable.fromWeb(res.body as import("node:stream/web").ReadableStream), stall.through(), hashing, createWriteStream(file), {
      signal: stall.signal,
    });
    return hash.digest("hex");
  } catch (err) {
    await fs.rm(file, { force: true });
    throw stall.signal.aborted ? stall.signal.reason : err;
  } finally {
    stall.done();
  }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}
