/**
 * Which compute backend trains a job: `SVC_TRAIN_BACKEND=auto|torch|tfjs` (or `svc worker
 * --backend`). `auto` takes torch when a Python that imports torch is found (SVC_PYTHON, then
 * python3 on PATH, then /usr/bin/python3), else tfjs, and says which and why; asking for torch
 * where it cannot start is an error, never a silent fall back.
 */
import { detectTorch, forgetTorchDetections, isTorchDetectionRemembered, startTorchBackend, type TorchRanks } from './torch/index.js';
import { describeRanks } from './torch/ranks.js';
import type { ComputeBackend } from './types.js';

export const BACKEND_CHOICES = ['auto', 'torch', 'tfjs'] as const;
export type BackendChoice = (typeof BACKEND_CHOICES)[number];

export function parseBackendChoice(value: string | undefined, source = 'SVC_TRAIN_BACKEND'): BackendChoice {
  const choice = (value ?? 'auto').trim().toLowerCase() || 'auto';
  if (!(BACKEND_CHOICES as readonly string[]).includes(choice)) throw new Error(`${source} must be one of ${BACKEND_CHOICES.join(', ')}, not "${value}"`);
  return choice as BackendChoice;
}

export interface ChosenBackend {
  backend: ComputeBackend;
  /** One sentence for the job's first event and the worker's log: what was picked and why. */
  reason: string;
}

export interface ChooseOptions {
  python?: string;
  /** torch device override: cuda, cuda:1, mps, cpu. */
  device?: string;
  /** The torch base model's dtype (the job's `dtype`); tfjs computes in float32 whatever it says. */
  dtype?: 'auto' | 'float32' | 'bfloat16';
  /** The job's `gradientCheckpointing`: the torch backend's activation checkpointing. */
  checkpointActivations?: boolean | 'auto';
  /** The job's `quantizedBase`: the torch backend keeps a quantised base's blocks ('keep', default) or dequantises them. */
  quantizedBase?: 'keep' | 'dequantize';
  log?: (line: string) => void;
  /** Data-parallel ranks (svc worker --procs / --gpus / --nodes): torch only. */
  ranks?: TorchRanks;
}

/** tfjs and its wasm backend load only for a job that trains on them (a torch worker never needs them). */
async function tfjsBackend(): Promise<ComputeBackend> {
  const { TfjsBackend } = await import('./tfjs.js');
  return new TfjsBackend();
}

export async function chooseBackend(choice: BackendChoice, options: ChooseOptions = {}): Promise<ChosenBackend> {
  if (options.ranks && choice === 'tfjs') throw new Error('several ranks (--procs, --gpus, --nodes) train with the torch backend only, but tfjs was asked for');
  if (choice === 'tfjs') return { backend: await tfjsBackend(), reason: 'tfjs was asked for' };
  // A Python the user named (SVC_PYTHON) is the only candidate: never quietly another one.
  const python = options.python ?? (process.env.SVC_PYTHON || undefined);
  const remembered = isTorchDetectionRemembered(python);
  const found = await detectTorch(python);
  if (!found.ok) {
    if (choice === 'torch' || options.ranks) throw new Error(`the torch backend was asked for but cannot start: ${found.reason}`);
    return { backend: await tfjsBackend(), reason: `auto picked tfjs: no Python with torch (${found.reason})` };
  }
  let backend: Awaited<ReturnType<typeof startTorchBackend>>;
  try {
    backend = await startTorchBackend({
      python: found.python,
      device: options.device,
      dtype: options.dtype,
      checkpointActivations: options.checkpointActivations,
      quantizedBase: options.quantizedBase,
      log: options.log,
      ranks: options.ranks,
    });
  } catch (error) {
    if (!remembered) throw error;
    // That Python had the stack when it was probed, jobs ago: probe again (once) before failing.
    forgetTorchDetections();
    return chooseBackend(choice, options);
  }
  const why = choice === 'torch' ? 'torch was asked for' : `auto picked torch: ${found.python} imports torch ${found.torchVersion}`;
  const ranks = (backend.info.worldSize ?? 1) > 1 ? ` × ${backend.info.worldSize} ranks (${options.ranks ? describeRanks(options.ranks) : ''})` : '';
  return { backend, reason: `${why}; training on ${backend.info.device}${ranks}` };
}
