/**
 * Bundles a project's `src/svc/index.ts` into `.svc/build/index.mjs`. The `svc-studio` import (and the
 * bare `svc` of projects written before the package was renamed) is pointed
 * at the running CLI's own SDK, so the trainer and the CLI share one SDK (and one version); other
 * packages stay external and resolve from the project's node_modules at run time.
 */
import { existsSync, rmSync } from "node:fs";
import path from "node:path";
import { build, type Plugin } from "esbuild";
import { packageRoot } from "../../sdk/packageRoot.js";
import { importSpecifier } from "../../sdk/platform/fileNames.js";
import { trainerBundlePath } from "../../sdk/paths.js";
import { recordBuildInputs } from "../../sdk/buildFreshness.js";

export const trainerSourcePath = (projectDir: string): string => path.join(projectDir, "src", "svc", "index.ts");

export class TrainerBuildError extends Error {}

/**
 * How the bundle imports the CLI's own SDK: a `file:` URL, since Node's ESM loader refuses a plain Windows path
 * (`C:\...\sdk.mjs`) as an import specifier.
 */
export const sdkImportSpecifier = (root: string = packageRoot(), pathModule: path.PlatformPath = path): string =>
  importSpecifier(pathModule.join(root, "dist", "sdk.mjs"), pathModule);

export async function buildTrainerBundle(projectDir: string): Promise<string> {
  const entry = trainerSourcePath(projectDir);
  if (!existsSync(entry)) throw new TrainerBuildError(`${path.relative(process.cwd(), entry) || entry} does not exist; run \`svc init\` to create a project`);
  const outfile = trainerBundlePath(projectDir);
  const sdk = sdkImportSpecifier();
  const resolveSvc: Plugin = {
    name: "svc-sdk",
    setup(b) {
      b.onResolve({ filter: /^(svc-studio|svc)$/ }, () => ({ path: sdk, external: true }));
      b.onResolve({ filter: /^[^./]/ }, (args) => (path.isAbsolute(args.path) ? undefined : { path: args.path, external: true }));
    },
  };
  try {
    const result = await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      format: "esm",
      platform: "node",
      target: "node20",
      sourcemap: "inline",
      logLevel: "silent",
      plugins: [resolveSvc],
      // The files it read, so a later run can tell the bundle is older than its sources (sdk/buildFreshness.ts).
      metafile: true,
      absWorkingDir: path.resolve(projectDir),
    });
    recordBuildInputs(projectDir, Object.keys(result.metafile.inputs));
  } catch (err) {
    // A failed build must not leave the previous bundle behind: `svc manifest` and `svc start`
    // reuse an existing bundle, so the studio would show, and train, the old trainer with no
    // error. With it gone, the next reader rebuilds and reports this same error.
    rmSync(outfile, { force: true });
    const errors = (err as { errors?: { text: string; location?: { file: string; line: number } }[] }).errors;
    const first = errors?.[0];
    const where = first?.location ? `${first.location.file}:${first.location.line}: ` : "";
    throw new TrainerBuildError(first ? `${where}${first.text}` : (err as Error).message);
  }
  return outfile;
}
