/** Finds the root folder of the installed `svc-studio` package (the `svc` command), from source (tsx) or from dist/ alike. */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The npm package name; the command it installs is `svc`. */
export const PACKAGE_NAME = 'svc-studio';

let cached: string | null = null;

export function packageRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === PACKAGE_NAME) return (cached = dir);
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${PACKAGE_NAME} package root`);
    dir = parent;
  }
}
