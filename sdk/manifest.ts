/**
 * The project's trainer manifest as `svc manifest --json` prints it and `/api/manifest` returns it,
 * and the Run training panel's three texts (SPEC section 4, verbatim), shared by the CLI and the UI.
 */
import type { Static } from "@sinclair/typebox";
import * as T from "@sinclair/typebox/type";

/** What a manifest says about the registered trainer. */
const ManifestTrainer = T.Object({
  name: T.String(),
  /** The dataset files it names, relative to the project (the training set first): editors check them (VS Code's Problems). */
  datasets: T.Optional(T.Array(T.String())),
  /**
   * For a model counted in bytes (svc-tiny: 1 token = 1 byte), the longest conversation in tokens,
   * which an editor can check without loading the model's tokenizer; absent for other models.
   */
  byteTokenLimit: T.Optional(T.Number()),
});
export type ManifestTrainer = Static<typeof ManifestTrainer>;

export const Manifest = T.Union([
  T.Object({ status: T.Literal("ok"), trainer: ManifestTrainer }),
  T.Object({ status: T.Literal("none") }),
  T.Object({ status: T.Literal("error"), error: T.String() }),
]);
export type Manifest = Static<typeof Manifest>;

export const NO_TRAINER_TEXT = "No trainer in src/svc/index.ts yet. Add createTrainer(...) and pass it to createSvc.";
export const manifestErrorText = (error: string): string => `Couldn't read manifest: ${error}`;

/** The text the Run training panel and `svc start` show for a manifest. */
export function manifestText(manifest: Manifest): string {
  if (manifest.status === "ok") return `Run training: ${manifest.trainer.name}`;
  if (manifest.status === "none") return NO_TRAINER_TEXT;
  return manifestErrorText(manifest.error);
}

/**
 * One line saying the build is older than its sources, so a run trains the old trainer: the CLI prints it before
 * `svc start` trains, the Run training panel shows it as a banner with Rebuild.
 */
export function staleBuildText(changed: string[]): string {
  const files =
    changed.length === 1 ? `${changed[0]} changed` : `${changed[0]} and ${changed.length - 1} other source file${changed.length === 2 ? "" : "s"} changed`;
  return `${files} since the last build: a run now trains the old build (.svc/build/index.mjs).`;
}
