/**
 * A machine other than node 0 in a job that spans several (`svc worker --nodes N --node-rank R`):
 * it runs its share of the ranks under torchrun for each job node 0 starts, and nothing else. Its
 * ranks take every request from rank 0 by broadcast, so it needs no cloud, only the base model at
 * the same path as on node 0 (a shared folder).
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { torchProcessEnv } from './env.js';
import { torchPythonPath } from './paths.js';
import { ranksEnv, torchrunArgs, type TorchRanks } from './ranks.js';

export interface FollowerOptions {
  python: string;
  ranks: TorchRanks;
  log: (line: string) => void;
  signal: AbortSignal;
}

/** Joins one job after another until `signal` aborts; torchrun waits at node 0's address for each. */
export async function runTorchFollower(options: FollowerOptions): Promise<void> {
  const entry = path.join(torchPythonPath(), 'svc_torch_server.py');
  while (!options.signal.aborted) {
    const child = spawn(options.python, ['-m', 'torch.distributed.run', ...torchrunArgs(options.ranks), entry], {
      env: torchProcessEnv(ranksEnv(options.ranks)),
      cwd: torchPythonPath(),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const stop = () => child.kill('SIGTERM');
    options.signal.addEventListener('abort', stop, { once: true });
    let buffered = '';
    child.stderr.on('data', (chunk: Buffer) => {
      const lines = (buffered + chunk.toString('utf8')).split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) options.log(line);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    options.signal.removeEventListener('abort', stop);
    if (options.signal.aborted) return;
    options.log(code === 0 ? 'the job on these ranks ended; waiting for the next' : `torchrun ended (exit code ${code}); joining again`);
    // A node 0 that is not up yet refuses at once: wait a little before the next try.
    await new Promise((resolve) => setTimeout(resolve, code === 0 ? 200 : 2000));
  }
}
