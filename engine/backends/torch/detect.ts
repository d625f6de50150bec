/**
 * Finds a Python that can run the torch backend: SVC_PYTHON (the only candidate when set), then
 * the venv `svc setup torch` made (torchVenvPython), then the system's (systemPythons: `python3`
 * and /usr/bin/python3, or `python` on Windows).
 * The first that imports torch, transformers, peft and gguf wins; otherwise the reason says what
 * each candidate answered and how to set the environment up.
 */
import { execFile } from 'node:child_process';
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
].join('\n');

export const SETUP_HINT = 'run `svc setup torch` (a venv with torch, transformers and peft) or set SVC_PYTHON';

/** The candidates in order, without duplicates (`on`: the platform, injected by tests). */
export function pythonCandidates(explicit?: string, on?: PythonPlatform): string[] {
  const env = on?.env ?? process.env;
  const list = explicit ? [explicit] : [env.SVC_PYTHON, torchVenvPython(torchVenvDir(on), on), ...systemPythons(on)];
  return [...new Set(list.filter((p): p is string => !!p))];
}

type ProbeAnswer = { ok: true; torchVersion: string; device: string; transformersVersion: string; peftVersion: string } | { ok: false; answer: string };

function probe(python: string): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    execFile(python, ['-c', PROBE], { timeout: 120_000 }, (error, stdout, stderr) => {
      const match = /SVC_TORCH_PROBE (\S+) (\S+) (\S+) (\S+)/.exec(stdout);
      if (match) return resolve({ ok: true, torchVersion: match[1], device: match[2], transformersVersion: match[3], peftVersion: match[4] });
      const code = (error as NodeJS.ErrnoException | null)?.code;
      if (code === 'ENOENT') return resolve({ ok: false, answer: 'not found' });
      const lastLine = stderr.trim().split('\n').pop() || error?.message || 'no answer';
      resolve({ ok: false, answer: lastLine });
    });
  });
}

export async function detectTorch(python?: string): Promise<TorchDetection> {
  const answers: string[] = [];
  for (const candidate of pythonCandidates(python)) {
    const result = await probe(candidate);
    if (result.ok) return { python: candidate, ...result };
    answers.push(`${candidate}: ${result.answer}`);
  }
  return { ok: false, reason: `no Python with torch, transformers and peft found (${answers.join('; ')}); ${SETUP_HINT}` };
}
