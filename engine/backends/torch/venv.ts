/**
 * Where svc's own Python environment for the torch backend lives, per platform: SVC_TORCH_VENV,
 * else a cache folder under the user's home (%LOCALAPPDATA% on Windows; not SVC_HOME, so every
 * data dir and test shares one install), and what runs Python there.
 */
import os from 'node:os';
import path from 'node:path';

/** What the answers depend on; the running process by default, injected by tests. */
export interface PythonPlatform {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  home: string;
}

const current = (): PythonPlatform => ({ platform: process.platform, env: process.env, home: os.homedir() });

/** svc's folder in the user's cache: %LOCALAPPDATA%/svc on Windows, else $XDG_CACHE_HOME/svc or ~/.cache/svc. */
export function svcCacheDir(on: PythonPlatform = current()): string {
  const paths = on.platform === 'win32' ? path.win32 : path.posix;
  const cache =
    on.platform === 'win32' ? on.env.LOCALAPPDATA || paths.join(on.home, 'AppData', 'Local') : on.env.XDG_CACHE_HOME || paths.join(on.home, '.cache');
  return paths.join(cache, 'svc');
}

export function torchVenvDir(on: PythonPlatform = current()): string {
  const paths = on.platform === 'win32' ? path.win32 : path.posix;
  if (on.env.SVC_TORCH_VENV) return paths.resolve(on.env.SVC_TORCH_VENV);
  return paths.join(svcCacheDir(on), 'torch-venv');
}

/** The venv's interpreter (Scripts\python.exe on Windows). */
export function torchVenvPython(dir = torchVenvDir(), on: Pick<PythonPlatform, 'platform'> = current()): string {
  return on.platform === 'win32' ? path.win32.join(dir, 'Scripts', 'python.exe') : path.posix.join(dir, 'bin', 'python');
}

/**
 * Pythons to try after SVC_PYTHON and the venv: Windows has `python` (the python.org installer and
 * the Store's) and no /usr/bin; elsewhere `python3` on PATH, then /usr/bin/python3 (where
 * distributions install their packages, often not the PATH's python3 under pyenv or a venv).
 */
export function systemPythons(on: Pick<PythonPlatform, 'platform'> = current()): string[] {
  return on.platform === 'win32' ? ['python', 'python3'] : ['python3', '/usr/bin/python3'];
}
