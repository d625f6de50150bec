/**
 * Finds `*.gguf` files under a folder. Model folders are laid out by the apps that download
 * them (LM Studio nests publisher/repo/file, the Hugging Face cache links snapshot files to
 * blobs), so the walk follows symbolic links but never visits a folder twice (no link loops) and
 * stops at a depth no real layout reaches.
 */
import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";

const MAX_DEPTH = 8;

/**
 * Only the first part of a split GGUF (`-00001-of-00003.gguf`) is a model one can load; the
 * other parts are not listed on their own.
 */
const LATER_SPLIT_PART = /-(\d{5})-of-\d{5}\.gguf$/i;

/** The GGUF files under `root` (or `root` itself when it is one), sorted; a missing root gives none. */
export async function findGgufFiles(root: string): Promise<string[]> {
  const found: string[] = [];
  const seen = new Set<string>();
  const visit = async (dir: string, depth: number): Promise<void> => {
    const real = await realpath(dir).catch(() => null);
    if (!real || seen.has(real) || depth > MAX_DEPTH) return;
    seen.add(real);
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      // Dot-folders are app state (.locks, .git), never models.
      if (entry.name.startsWith(".")) continue;
      const full = path.join(dir, entry.name);
      const isLink = entry.isSymbolicLink();
      const info = isLink ? await stat(full).catch(() => null) : entry;
      if (!info) continue;
      if (info.isDirectory()) await visit(full, depth + 1);
      else if (info.isFile() && isGgufName(entry.name)) found.push(full);
    }
  };
  const info = await stat(root).catch(() => null);
  if (info?.isFile()) return isGgufName(root) ? [root] : [];
  if (info?.isDirectory()) await visit(root, 0);
  return found;
}

function isGgufName(name: string): boolean {
  if (!name.toLowerCase().endsWith(".gguf")) return false;
  const split = LATER_SPLIT_PART.exec(name);
  return !split || Number(split[1]) === 1;
}
