/**
 * What a dry run found (`createTrainer({ dryRun: true })`, `svc start --dry-run`), and how it
 * reads: lines for a terminal, or JSON lines for tools (`--json`). Pure and import-free: the UIs
 * bundle it to tell a dry run's output from a training run's.
 */

/** One dataset file as the dry run read it. */
export interface DryRunSplit {
  split: "train" | "eval";
  /** The path as the trainer names it, e.g. "data/train.jsonl". */
  file: string;
  /** Conversations that would train (valid, and within the length limit). */
  conversations: number;
  /** Tokens of those conversations as the model's own tokenizer renders them; null when not counted. */
  tokens: number | null;
  /** Of those, the tokens that carry loss (assistant content and its end-of-turn token). */
  trainedTokens: number | null;
  /** The longest well-formed conversation, even one over the limit (that is worth seeing). */
  longest: { line: number; tokens: number } | null;
  /** `line N: why`, as `svc start` reports them; empty when the file is fine. */
  errors: string[];
}

/** The training plan the datasets and the config make. */
export interface DryRunPlan {
  steps: number;
  batchSize: number;
  /** Passes over the training set that many steps make. */
  epochs: number;
  /** Tokens the steps process, batches padded to their longest conversation as the trainer pads them. */
  paddedTokens: number;
  /** Evaluations of the eval set: before the first step, every evalSteps, and at the end. */
  evaluations: number;
}

export type DryRunEstimate =
  | {
      available: true;
      /** The backend this machine would train on, e.g. "torch", and where, e.g. "cpu (2 threads)". */
      backend: string;
      device: string;
      /** Why that backend (the same sentence a job's first event carries). */
      reason: string;
      /** Measured: seconds for an average step of this run, from the median of a few timed steps on a throwaway adapter. */
      secondsPerStep: number;
      /** Loading the base weights, as measured. */
      loadSeconds: number;
      /** All evaluations together, from a timed evaluation batch. */
      evalSeconds: number;
      /** The whole run: loading, steps and evaluations (uploads and checkpoints not counted). */
      seconds: number;
    }
  | {
      available: false;
      reason: string;
      /** True when the run could not train as configured (it would not fit in memory): the dry run is then not ok. */
      blocking: boolean;
    };

export interface DryRunReport {
  trainer: string;
  model: string;
  /** How the model's own tokenizer was found, e.g. "svc-tiny's byte tokenizer". */
  tokenizer: string | null;
  /** Conversations longer than this many tokens would be refused; null when unknown. */
  maxSeqLength: number | null;
  splits: DryRunSplit[];
  /** Null when the training set has no valid conversation. */
  plan: DryRunPlan | null;
  estimate: DryRunEstimate;
  /** No errors: `svc start` would upload and train this. */
  ok: boolean;
}

const count = (n: number) => n.toLocaleString("en-US");

/** "about 45 s", "about 3 min", "about 2.5 h". */
export function formatDuration(seconds: number): string {
  if (seconds < 90) return `about ${Math.max(1, Math.round(seconds))} s`;
  if (seconds < 90 * 60) return `about ${Math.round(seconds / 60)} min`;
  return `about ${Number((seconds / 3600).toFixed(1))} h`;
}

function splitLine(split: DryRunSplit, limit: number | null): string {
  const parts = [`${count(split.conversations)} conversation${split.conversations === 1 ? "" : "s"}`];
  if (split.tokens !== null) parts[0] += `, ${count(split.tokens)} tokens (${count(split.trainedTokens ?? 0)} trained)`;
  if (split.longest) parts.push(`longest ${count(split.longest.tokens)} tokens (line ${split.longest.line})${limit !== null ? ` of ${count(limit)}` : ""}`);
  return `${split.split.padEnd(5)}  ${split.file}: ${parts.join("; ")}`;
}

/** How the terminal report begins, so a reader of `svc start`'s output (the Run training panel) can tell a dry run. */
export const DRY_RUN_HEADER = "dry run of ";

/** Whether `svc start`'s output is a dry run's report rather than a training run's log. */
export function isDryRunOutput(text: string): boolean {
  return text.split("\n").some((line) => line.startsWith(DRY_RUN_HEADER));
}

/** The report as the terminal shows it, one string per line. */
export function dryRunText(report: DryRunReport): string[] {
  const lines = [`${DRY_RUN_HEADER}"${report.trainer}" on ${report.model}: nothing was uploaded and no job was created`];
  if (report.tokenizer) lines.push(`tokens counted with ${report.tokenizer}${report.maxSeqLength !== null ? `; conversations may be up to ${count(report.maxSeqLength)} tokens` : ""}`);
  for (const split of report.splits) {
    lines.push(splitLine(split, report.maxSeqLength));
    for (const error of split.errors) lines.push(`       ${error}`);
  }
  if (report.plan) {
    const { plan } = report;
    lines.push(`steps  ${count(plan.steps)} at batch ${plan.batchSize} (${Number(plan.epochs.toFixed(2))} epochs), ${count(plan.paddedTokens)} tokens with padding${plan.evaluations > 0 ? `, ${plan.evaluations} evaluations` : ""}`);
  }
  const { estimate } = report;
  if (estimate.available) {
    lines.push(
      `time   ${formatDuration(estimate.seconds)} on ${estimate.backend}, ${estimate.device}: ${estimate.secondsPerStep.toFixed(2)} s a step as timed on this machine` +
        `${estimate.evalSeconds >= 0.5 ? `, evaluations ${formatDuration(estimate.evalSeconds)}` : ""}, loading ${formatDuration(estimate.loadSeconds)}`,
    );
    lines.push(`       ${estimate.reason}`);
  } else {
    lines.push(`time   not estimated: ${estimate.reason}`);
  }
  lines.push(report.ok ? "ok: svc start would upload these datasets and train" : "not ok: fix the lines above before svc start");
  return lines;
}

/** The report as JSON lines for `--json`: one per split, then the plan, the estimate and the verdict. */
export function dryRunJsonLines(report: DryRunReport): string[] {
  const { splits, plan, estimate, ok, ...about } = report;
  return [
    { event: "dryRun.started", data: about },
    ...splits.map((split) => ({ event: "dryRun.split", data: split })),
    ...(plan ? [{ event: "dryRun.plan", data: plan }] : []),
    { event: "dryRun.estimate", data: estimate },
    { event: "dryRun.completed", data: { ok } },
  ].map((line) => JSON.stringify(line));
}
