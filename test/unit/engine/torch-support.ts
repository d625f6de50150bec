import { startTorchBackend, type TorchBackend, type TorchBackendOptions } from '../../../engine/backends/torch/index.js';
import { torchVenvPython } from '../../../engine/backends/torch/venv.js';

/** The Python the torch backend tests run: SVC_PYTHON when set, else svc's venv (scripts/setup-system.sh makes it). */
export function torchTestPython(): string {
  return process.env.SVC_PYTHON || torchVenvPython();
}

/** A torch backend for comparisons with exact references: float32, one thread (results independent of the machine). */
export function startExactTorchBackend(options: Pick<TorchBackendOptions, 'quantizedBase'> = {}): Promise<TorchBackend> {
  return startTorchBackend({ python: torchTestPython(), threads: 1, dtype: 'float32', ...options });
}
