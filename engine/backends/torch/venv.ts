/**
 * Where svc's own Python environment for the torch backend lives: SVC_TORCH_VENV, else a cache
 * folder under the user's home (not SVC_HOME, so every data dir and test shares one install).
 */
import os from 'node:os';
import path from 'node:path';

export function torchVenvDir(): string {
  if (process.env.SVC_TORCH_VENV) return path.resolve(process.env.SVC_TORCH_VENV);
  const cache = process.platform === 'win32' ? process.env.LOCALAPPDATA || path.join(os.homedir(), 'AppData', 'Local') : process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'svc', 'torch-venv');
}

/** The venv's interpreter (Scripts\python.exe on Windows). */
export function torchVenvPython(dir = torchVenvDir()): string {
  return process.platform === 'win32' ? path.join(dir, 'Scripts', 'python.exe') : path.join(dir, 'bin', 'python');
}
