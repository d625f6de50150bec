/**
 * Finds a Python that can run the torch backend: SVC_PYTHON, then `python3` on PATH, then
 * /usr/bin/python3 (where distributions install their torch packages, often not the PATH's
 * python3 under pyenv or a venv). The first that imports torch wins; otherwise the reason says
 * what each candidate answered.
 */
import { execFile } from 'node:child_process';

export type TorchDetection =
  | { ok: true; python: string; torchVersion: string; device: string }
  | { ok: false; reason: string };

const PROBE = [
  'import torch',
  "d = 'cuda' if torch.cuda.is_available() else ('mps' if getattr(torch.backends, 'mps', None) and torch.backends.mps.is_available() else 'cpu')",
  "print('SVC_TORCH_PROBE', torch.__version__, d)",
].join('\n');

/** The candidates in order, without duplicates. */
export function pythonCandidates(explicit?: string): string[] {
  const list = explicit ? [explicit] : [process.env.SVC_PYTHON, 'python3', '/usr/bin/python3'];
  return [...new Set(list.filter((p): p is string => !!p))];
}

function probe(python: string): Promise<{ ok: true; torchVersion: string; device: string } | { ok: false; answer: string }> {
  return new Promise((resolve) => {
    execFile(python, ['-c', PROBE], { timeout: 60_000 }, (error, stdout, stderr) => {
      const match = /SVC_TORCH_PROBE (\S+) (\S+)/.exec(stdout);
      if (match) return resolve({ ok: true, torchVersion: match[1], device: match[2] });
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
    if (result.ok) return { ok: true, python: candidate, torchVersion: result.torchVersion, device: result.device };
    answers.push(`${candidate}: ${result.answer}`);
  }
  return { ok: false, reason: `no Python with torch found (${answers.join('; ')}); install torch (pip install torch) or set SVC_PYTHON` };
}
