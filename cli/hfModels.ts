/**
 * Hugging Face models for `svc models add`: a folder on disk, or a repo id (`Qwen/Qwen3-0.6B`)
 * found in the local Hugging Face cache. Each becomes a GGUF in the cloud's data dir, made once
 * by llama.cpp's converter with progress, and is then registered like any GGUF.
 */
import { existsSync, statSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { convertHfFolder } from "../engine/hf/convert.js";
import { inspectHfFolder } from "../engine/hf/hfFolder.js";
import { huggingFaceHubDir, type Env } from "./discoverSources.js";
import { CliError } from "./output.js";
import { safeFileName } from "../sdk/platform/fileNames.js";

export function isDirectory(target: string): boolean {
  try {
    return statSync(target).isDirectory();
  } catch {
    return false;
  }
}

/** `Org/Name` in the Hugging Face cache: the snapshot refs/main names, else the newest with a config.json. */
export async function hfCacheSnapshot(repoId: string, env: Env = process.env): Promise<string | undefined> {
  if (!/^[\w.-]+\/[\w.-]+$/.test(repoId)) return undefined;
  const repoDir = path.join(huggingFaceHubDir(env, os.homedir()), `models--${repoId.replace("/", "--")}`);
  const snapshots = path.join(repoDir, "snapshots");
  if (!existsSync(snapshots)) return undefined;
  const main = await readFile(path.join(repoDir, "refs", "main"), "utf8").catch(() => "");
  if (main.trim() && existsSync(path.join(snapshots, main.trim(), "config.json"))) return path.join(snapshots, main.trim());
  const candidates = (await readdir(snapshots)).map((s) => path.join(snapshots, s)).filter((s) => existsSync(path.join(s, "config.json")));
  candidates.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  return candidates[0];
}

/** Converts `folder` into `<dataDir>/converted/<name>.gguf` (once; --replace converts again) and returns its path. */
export async function ggufForHfFolder(folder: string, name: string, dataDir: string, replace: boolean): Promise<string> {
  const facts = await inspectHfFolder(folder).catch((err: Error) => {
    throw new CliError(err.message);
  });
  // A model name may hold characters Windows gives a meaning (`qwen3:0.6b`: an NTFS stream).
  const out = path.join(dataDir, "converted", `${safeFileName(name)}.gguf`);
  if (existsSync(out) && !replace) {
    process.stderr.write(`svc: using ${out}, converted from ${facts.folder} before (--replace converts again)\n`);
    return out;
  }
  process.stderr.write(
    `converting ${facts.folder} (${facts.modelType}, ${(facts.parameters / 1e6).toFixed(1)}M parameters) to GGUF with llama.cpp's converter\n`,
  );
  const interactive = process.stderr.isTTY;
  let last = 0;
  await convertHfFolder(facts, out, {
    onProgress: ({ done, total, tensor }) => {
      const line = `  ${done}/${total} tensors (${tensor})`;
      if (interactive) process.stderr.write(`\r${line.padEnd(72)}`);
      else if (done === total || Date.now() - last > 2000) {
        last = Date.now();
        process.stderr.write(line + "\n");
      }
    },
  }).catch((err: Error) => {
    throw new CliError(err.message);
  });
  if (interactive) process.stderr.write("\n");
  return out;
}
