/**
 * Where the Python half of the torch backend lives. Resolved from the package root rather than
 * this file's URL, so the same path works from source (tsx) and from the bundled dist/ files:
 * the package ships engine/backends/torch/python/ as it is in the repository.
 */
import path from 'node:path';
import { packageRoot } from '../../packageRoot.js';

/** The folder that holds the `svc_torch` package, its entry script and the bench anchor. */
export function torchPythonPath(): string {
  return path.join(packageRoot(), 'engine', 'backends', 'torch', 'python');
}
