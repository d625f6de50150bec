/**
 * Finds a Python that can run the torch backend: SVC_PYTHON (the only candidate when set), then
 * the venv `svc setup torch` made (torchVenvPython), then the system's (systemPythons: `python3`
 * and /usr/bin/python3, or `python` on Windows).
 * The first that imports torch, transformers, peft and gguf wins; otherwise the reason says what
 * each candidate answered and how to set the environment up. A Python found is remembered in this
 * process and, while its install is unchanged, on disk for the next one (probeCache.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { cachedProbe, dropProbes, keepProbe, type ProbeFacts } from './probeCache.js';
import { systemPythons, torchVenvDir, torchVenvPython, type PythonPlatform } from './venv.js';

export type TorchDetection =
  | { ok: true; python: string; torchVersion: string; device: string; transformersVersion: string; peftVersion: string }
  | { ok: false; reason: string };

/** The modules the backend imports; the first missing one is named in the answer. */
const REQUIRED_MODULES = ['torch', 'transformers', 'peft', 'accelerate', 'gguf', 'numpy'];

const PROBE = [
  'import importlib',
  `for name in ${JSON.stringify(REQUIRED_MODULES)}:`,
  '    try:',
  '        importlib.import_module(name)',
  '    except ImportError as err:',
  "        raise SystemExit(f'no module {name} ({err})')",
  'import torch, transformers, peft',
  "d = 'cuda' if torch.cuda.is_available() else ('mps' if getattr(torch.backends, 'mps', None) and torch.backends.mps.is_available() else 'cpu')",
  "print('SVC_TORCH_PROBE', torch.__version__, d, transformers.__version__, peft.__version__)",
  'import json, os, sys',
  "print('SVC_TORCH_PATHS', json.dumps([sys.executable] + [p for p in sys.path if p and os.path.isdir(p)]))",
].join('\n');

export const SETUP_HINT = 'run `svc setup torch` (a venv with torch, transformers and peft) or set SVC_PYTHON';

/** The candidates in order, without duplicates (`on`: the platform, injected by tests). */
export function pythonCandidates(explicit?: string, on?: PythonPlatform): string[] {
  const env = on?.env ?? process.env;
  const list = explicit ? [explicit] : [env.SVC_PYTHON, torchVenvPython(torchVenvDir(on), on), ...systemPythons(on)];
  return [...new Set(list.filter((p): p is string => !!p))];
}

type ProbeAnswer = ({ ok: true } & ProbeFacts) | { ok: false; answer: string };

function probe(python: string): Promise<ProbeAnswer> {
  const known = cachedProbe(python);
  if (known) return Promise.resolve({ ok: true, ...known });
  return new Promise((resolve) => {
    execFile(python, ['-c', PROBE], { timeout: 120_000 }, (error, stdout, stderr) => {
      const match = /SVC_TORCH_PROBE (\S+) (\S+) (\S+) (\S+)/.exec(stdout);
      if (match) {
        const facts: ProbeFacts = { torchVersion: match[1], device: match[2], transformersVersion: match[3], peftVersion: match[4] };
        keepProbe(python, facts, probedPaths(stdout));
        return resolve({ ok: true, ...facts });
      }
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (code === 'ENOENT') return resolve({ ok: false, answer: 'not found' });
      const lastLine = stderr.trim().split('\n').pop() || error?.message || 'no answer';
      resolve({ ok: false, answer: lastLine });
    });
  });
}

/** The interpreter and sys.path folders the probe printed, which stamp its answer on disk. */
function probedPaths(stdout: string): string[] {
  const line = /^SVC_TORCH_PATHS (.*)$/m.exec(stdout)?.[1];
  try {
    const paths: unknown = line ? JSON.parse(line) : [];
    return Array.isArray(paths) ? paths.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * Found Pythons, by the candidates and the PATH that named them: a probe imports torch,
 * transformers and peft (seconds), and a worker would otherwise pay that before every job. Only
 * successes are kept, so a stack installed later is seen; a backend that fails to start with a
 * remembered Python forgets it (forgetTorchDetections).
 */
const remembered = new Map<string, Extract<TorchDetection, { ok: true }>>();

export async function detectTorch(python?: string): Promise<TorchDetection> {
  const candidates = pythonCandidates(python);
  const key = JSON.stringify([candidates, process.env.PATH ?? '']);
  const known = remembered.get(key);
  if (known) return known;
  const answers: string[] = [];
  for (const candidate of candidates) {
    const result = await probe(candidate);
    if (result.ok) {
      const found = { python: candidate, ...result };
      remembered.set(key, found);
      return found;
    }
    answers.push(`${candidate}: ${result.answer}`);
  }
  return { ok: false, reason: `no Python with torch, transformers and peft found (${answers.join('; ')}); ${SETUP_HINT}` };
}

/**
 * Whether detectTorch(python) would answer without running a probe: from memory, or from disk for
 * the first candidate that exists.
 */
export function isTorchDetectionRemembered(python?: string): boolean {
  const candidates = pythonCandidates(python);
  if (remembered.has(JSON.stringify([candidates, process.env.PATH ?? '']))) return true;
  const first = candidates.find((candidate) => !path.isAbsolute(candidate) || existsSync(candidate));
  return first !== undefined && cachedProbe(first) !== undefined;
}

/** Forgets every remembered Python, here and on disk: the next detectTorch probes again. */
export function forgetTorchDetections(): void {
  remembered.clear();
  dropProbes();
}
