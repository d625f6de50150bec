/**
 * The project's trainer manifest as `svc manifest --json` prints it and `/api/manifest` returns it,
 * and the Run training panel's three texts (SPEC section 4, verbatim), shared by the CLI and the UI.
 */

export type Manifest = { status: "ok"; trainer: ManifestTrainer } | { status: "none" } | { status: "error"; error: string };

/** What a manifest says about the registered trainer. */
export interface ManifestTrainer {
  name: string;
  /** The dataset files it names, relative to the project (the training set first): editors check them (VS Code's Problems). */
  datasets?: string[];
  /**
   * For a model counted in bytes (svc-tiny: 1 token = 1 byte), the longest conversation in tokens,
   * which an editor can check without loading the model's tokenizer; absent for other models.
   */
  byteTokenLimit?: number;
}

export const NO_TRAINER_TEXT = "No trainer in src/svc/index.ts yet. Add createTrainer(...) and pass it to createSvc.";
export const manifestErrorText = (error: string): string => `Couldn't read manifest: ${error}`;

/** The text the Run training panel and `svc start` show for a manifest. */
export function manifestText(manifest: Manifest): string {
  if (manifest.status === "ok") return `Run training: ${manifest.trainer.name}`;
  if (manifest.status === "none") return NO_TRAINER_TEXT;
  return manifestErrorText(manifest.error);
}
