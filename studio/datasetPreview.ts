/**
 * `GET /api/datasets/preview`: the project's datasets as `svc start --dry-run --preview --json`
 * reads them, in a subprocess like `/api/manifest` (DESIGN.md section 8): the project's bundle and
 * the model's tokenizer load there, never in the studio (which may be VS Code's extension host).
 * The dry run is the one `svc start` makes, so the counts, lengths and errors are the ones a run
 * would meet. One preview runs at a time; requests while it runs share its answer.
 */
import type { DatasetPreview } from "../sdk/api/studio.js";
import { NO_TRAINER_TEXT } from "../sdk/manifest.js";
import { readDryRunJsonLines } from "../sdk/trainer/dryRunReport.js";
import { firstErrorLine, runSvcToEnd, type SvcCommand } from "./svcCommand.js";

/** The first run builds the bundle and may start the cloud (for its model list): generous. */
const PREVIEW_TIMEOUT_MS = 180_000;
/** Every conversation's length is in the output: about 5 MB for a million conversations. */
const OUTPUT_LIMIT = 64 * 2 ** 20;

export class DatasetPreviews {
  private running: Promise<DatasetPreview> | null = null;

  constructor(
    private readonly command: SvcCommand,
    private readonly projectDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  read(): Promise<DatasetPreview> {
    this.running ??= readDatasetPreview(this.command, this.projectDir, this.env).finally(() => (this.running = null));
    return this.running;
  }
}

export async function readDatasetPreview(command: SvcCommand, projectDir: string, env: NodeJS.ProcessEnv = process.env): Promise<DatasetPreview> {
  const output = await runSvcToEnd(command, ["start", "--dry-run", "--preview", "--json"], projectDir, env, {
    timeoutMs: PREVIEW_TIMEOUT_MS,
    stdoutLimit: OUTPUT_LIMIT,
  });
  if (output.kind === "failed") return { status: "error", error: output.error };
  return parsePreviewOutput(output.stdout, output.stderr, output.code);
}

/** The dry run's report when it finished (its verdict may be "not ok": that is the preview's to show); else why not. */
export function parsePreviewOutput(stdout: string, stderr: string, exitCode: number | null): DatasetPreview {
  const report = readDryRunJsonLines(stdout);
  if (report) return { status: "ok", report };
  const reason = firstErrorLine(stderr) ?? `svc start --dry-run exited with code ${exitCode}`;
  return reason === NO_TRAINER_TEXT ? { status: "none" } : { status: "error", error: reason };
}
