/**
 * What a probe of a Python found, kept on disk for the next process: the probe imports torch,
 * transformers and peft, about five seconds of CPU, and every `svc start`, `svc worker` and job
 * would otherwise pay it again for the same unchanged install.
 *
 * An answer is used only while its fingerprint holds: the interpreter and every folder on its
 * sys.path, with their modification times and sizes. Installing, upgrading or removing a package
 * adds or removes entries in site-packages, which changes that folder's time, so `svc setup torch`
 * or a `pip install` makes the next run probe again. Only Pythons named by an absolute path are
 * kept (a bare `python3` depends on PATH), and only answers that found the stack.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { svcCacheDir } from './venv.js';

export interface ProbeFacts {
  torchVersion: string;
  device: string;
  transformersVersion: string;
  peftVersion: string;
}

/** A path and what it was when probed: [path, mtimeMs, size]. */
type Stamp = [string, number, number];

interface Entry {
  facts: ProbeFacts;
  stamps: Stamp[];
}

interface CacheFile {
  version: 1;
  entries: Record<string, Entry>;
}

const cacheFile = () => path.join(svcCacheDir(), 'python-probes.json');

/** The environment a probe's answer depends on besides the files: where Python looks, and which GPUs it may see. */
function keyOf(python: string): string | undefined {
  if (!path.isAbsolute(python)) return undefined;
  const { PYTHONPATH = '', PYTHONHOME = '', CUDA_VISIBLE_DEVICES = '' } = process.env;
  return JSON.stringify([python, PYTHONPATH, PYTHONHOME, CUDA_VISIBLE_DEVICES]);
}

function stamp(file: string): Stamp | undefined {
  try {
    const stats = statSync(file);
    return [file, stats.mtimeMs, stats.size];
  } catch {
    return undefined;
  }
}

function read(): CacheFile {
  try {
    const parsed = JSON.parse(readFileSync(cacheFile(), 'utf8')) as CacheFile;
    if (parsed.version === 1 && parsed.entries && typeof parsed.entries === 'object') return parsed;
  } catch {
    // Missing or unreadable: nothing is known, and the next probe writes a fresh file.
  }
  return { version: 1, entries: {} };
}

/** The kept answer for this Python, when nothing it was stamped with has changed since. */
export function cachedProbe(python: string): ProbeFacts | undefined {
  const key = keyOf(python);
  const entry = key === undefined ? undefined : read().entries[key];
  if (!entry || !Array.isArray(entry.stamps) || entry.stamps.length === 0) return undefined;
  for (const [file, mtimeMs, size] of entry.stamps) {
    const now = stamp(file);
    if (!now || now[1] !== mtimeMs || now[2] !== size) return undefined;
  }
  return entry.facts;
}

/**
 * Keeps a probe's answer, stamped with `paths` (the interpreter and its sys.path folders, as the
 * probe printed them). Written whole under a temporary name and renamed, so processes that probe at
 * the same time never read half a file; entries of Pythons that no longer exist are dropped.
 */
export function keepProbe(python: string, facts: ProbeFacts, paths: string[]): void {
  const key = keyOf(python);
  const stamps = paths.map(stamp).filter((s): s is Stamp => s !== undefined);
  if (key === undefined || stamps.length === 0) return;
  const file = cacheFile();
  const cache = read();
  for (const [other, entry] of Object.entries(cache.entries)) {
    if (!entry.stamps?.every(([p]) => stamp(p))) delete cache.entries[other];
  }
  cache.entries[key] = { facts, stamps };
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(temporary, `${JSON.stringify(cache, null, 1)}\n`);
    renameSync(temporary, file);
  } catch {
    // A cache that cannot be written only costs the next process a probe.
    rmSync(temporary, { force: true });
  }
}

/** Forgets every kept answer: the next detection in any process probes again. */
export function dropProbes(): void {
  rmSync(cacheFile(), { force: true });
}
