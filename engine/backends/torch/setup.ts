/**
 * `svc setup torch`: svc's own Python environment for the torch backend. A venv (torchVenvDir)
 * with the pinned packages of requirements.txt, installed by that venv's pip; a stamp with the
 * requirements' sha256 makes a second run a no-op until the pins change. pip's own progress
 * streams through `log`, so a first install (hundreds of MB for torch) is never silent.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { detectTorch, type TorchDetection } from './detect.js';
import { torchPythonPath } from './paths.js';
import { torchVenvDir, torchVenvPython } from './venv.js';

export interface TorchSetupOptions {
  /** The Python that creates the venv (3.10 or newer); default python3 (py -3 on Windows). */
  python?: string;
  /** Where the venv goes; default torchVenvDir(). */
  venv?: string;
  /** Another package index for pip, e.g. PyTorch's CPU-only or a specific CUDA build. */
  indexUrl?: string;
  /** Reinstall even when the stamp says the pins are installed. */
  force?: boolean;
  log: (line: string) => void;
}

export type TorchSetupResult = { venv: string; python: string; installed: boolean; detection: Extract<TorchDetection, { ok: true }> };

export function requirementsPath(): string {
  return path.join(path.dirname(torchPythonPath()), 'requirements.txt');
}

const STAMP = 'svc-requirements.sha256';

function run(command: string, args: string[], log: (line: string) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } });
    let tail: string[] = [];
    const onData = (chunk: Buffer) => {
      for (const line of chunk.toString('utf8').split(/\r?\n/)) {
        if (!line.trim()) continue;
        log(line);
        tail = [...tail.slice(-9), line];
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('error', (err) => reject(new Error(`cannot run ${command}: ${err.message}`)));
    child.on('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`${path.basename(command)} ${args.slice(0, 3).join(' ')} failed (${signal ?? `exit ${code}`}):\n${tail.join('\n')}`));
    });
  });
}

function defaultBasePython(): { command: string; args: string[] } {
  return process.platform === 'win32' ? { command: 'py', args: ['-3'] } : { command: 'python3', args: [] };
}

export async function setupTorch(options: TorchSetupOptions): Promise<TorchSetupResult> {
  const venv = path.resolve(options.venv ?? torchVenvDir());
  const python = torchVenvPython(venv);
  const requirements = await readFile(requirementsPath());
  const digest = createHash('sha256').update(requirements).digest('hex');
  const stampFile = path.join(venv, STAMP);
  const stamped = existsSync(stampFile) && (await readFile(stampFile, 'utf8')).trim() === digest;

  let installed = false;
  if (!stamped || options.force) {
    if (!existsSync(python)) {
      const base = options.python ? { command: options.python, args: [] } : defaultBasePython();
      options.log(`creating the venv ${venv} with ${[base.command, ...base.args].join(' ')}`);
      await run(base.command, [...base.args, '-m', 'venv', venv], options.log);
    }
    options.log(`installing ${requirementsPath()} (torch, transformers, peft, accelerate, gguf) into ${venv}`);
    const index = options.indexUrl ? ['--index-url', options.indexUrl] : [];
    await run(python, ['-m', 'pip', 'install', '--progress-bar', 'off', ...index, '-r', requirementsPath()], options.log);
    await writeFile(stampFile, digest + '\n');
    installed = true;
  }
  const detection = await detectTorch(python);
  if (!detection.ok) throw new Error(`the venv ${venv} was set up but cannot run the torch backend: ${detection.reason}`);
  return { venv, python, installed, detection };
}
