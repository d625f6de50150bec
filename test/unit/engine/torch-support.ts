import { startTorchBackend, type TorchBackend } from '../../../engine/backends/torch/index.js';

/** The Python the torch backend tests run: SVC_PYTHON when set, else the system one that has torch. */
export function torchTestPython(): string {
  return process.env.SVC_PYTHON || '/usr/bin/python3';
}

/** A torch backend for comparisons with exact references: float32, one thread (results independent of the machine). */
export function startExactTorchBackend(): Promise<TorchBackend> {
  return startTorchBackend({ python: torchTestPython(), threads: 1, dtype: 'float32' });
}
