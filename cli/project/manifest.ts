/**
 * Reads the project's registered trainer from its bundle (SPEC.md section 4): reuses
 * `.svc/build/index.mjs` when it exists (edits to src/svc/ are picked up by `svc build`), builds it
 * otherwise, imports it, and looks for `createSvc({ trainer })` as the default export.
 */
import { existsSync, statSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { trainerBundlePath } from "../../sdk/paths.js";
import { isSvc, isTrainer, type Trainer } from "../../sdk/trainer/trainer.js";
import { buildTrainerBundle } from "./bundle.js";
import type { Manifest, ManifestTrainer } from "../../sdk/manifest.js";
import { SVC_TINY } from "../../engine/model/config.js";

export { manifestText, NO_TRAINER_TEXT, manifestErrorText, type Manifest } from "../../sdk/manifest.js";

/** The manifest's facts about a trainer: its name, its dataset files, and svc-tiny's byte limit where it applies. */
function manifestTrainer(trainer: Trainer): ManifestTrainer {
  const { dataset, evalDataset } = trainer.datasets;
  const byteTokenLimit =
    trainer.config.model === SVC_TINY.name ? Math.min(trainer.config.maxSeqLength ?? SVC_TINY.contextLength, SVC_TINY.contextLength) : undefined;
  return { name: trainer.name, datasets: evalDataset ? [dataset, evalDataset] : [dataset], ...(byteTokenLimit !== undefined ? { byteTokenLimit } : {}) };
}

export async function loadTrainer(projectDir: string, options: { rebuild?: boolean } = {}): Promise<{ manifest: Manifest; trainer: Trainer | null }> {
  try {
    const bundle = trainerBundlePath(projectDir);
    if (options.rebuild || !existsSync(bundle)) await buildTrainerBundle(projectDir);
    // The mtime in the URL makes a rebuilt bundle load fresh instead of from the module cache.
    const module = await import(`${pathToFileURL(bundle).href}?v=${statSync(bundle).mtimeMs}`);
    const app = [module.default, module.svc].find(isSvc);
    const trainer = app?.trainer ?? null;
    if (!trainer || !isTrainer(trainer)) return { manifest: { status: "none" }, trainer: null };
    return { manifest: { status: "ok", trainer: manifestTrainer(trainer) }, trainer };
  } catch (err) {
    return { manifest: { status: "error", error: (err as Error).message.split("\n")[0] }, trainer: null };
  }
}
