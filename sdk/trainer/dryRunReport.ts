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
  /** With `--preview` only: what a view needs to show the file before a run. */
  preview?: SplitPreview;
}

/**
 * A dataset file shown before a run (`svc start --dry-run --preview`, the studio's Datasets view): every
 * conversation's length, the first conversations, and every problem with its line.
 */
export interface SplitPreview {
  /** Each well-formed conversation's tokens, in file order, those over the limit too; null when not counted. */
  lengths: number[] | null;
  /** The first well-formed conversations as the file has them (long contents cut, `truncated` set). */
  rows: PreviewRow[];
  /** Problems with their 1-based line (0: the whole file, e.g. empty), the first PREVIEW_MAX_ISSUES. */
  issues: { line: number; message: string }[];
  /** All problems, when `issues` lists fewer. */
  issueCount: number;
}

export interface PreviewRow {
  line: number;
  messages: { role: string; content: string }[];
  /** The conversation's tokens as the model renders it; null when not counted. */
  tokens: number | null;
  /** A content was longer than PREVIEW_CONTENT_CHARS and is cut there. */
  truncated: boolean;
}

/** Conversations a preview shows, problems it lists, and characters it keeps of one message. */
export const PREVIEW_ROWS = 20;
export const PREVIEW_MAX_ISSUES = 200;
export const PREVIEW_CONTENT_CHARS = 2000;

/** The training plan the datasets and the config make. */
export interface DryRunPlan {
  steps: number;
  batchSize: number;
  /** Passes over the training set that many steps make. */
  epochs: number;
  /** Tokens the steps process, batches padded to their longest conversation as the trainer pads them. */
  paddedTokens: number;
  /** Evaluations of the eval set the run reports (training.log frames with evalLoss): every evalSteps, and at the end. */
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
  /** The model's context in tokens, as the cloud registered it; null when unknown. */
  contextLength?: number | null;
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

/** A previewed conversation on one line: `line 4 (41 tokens): user: What is… | assistant: {"answer": …}`. */
function rowLine(row: PreviewRow): string {
  const text = row.messages.map((m) => `${m.role}: ${m.content.replace(/\s+/g, " ")}`).join(" | ");
  const head = `line ${row.line}${row.tokens !== null ? ` (${count(row.tokens)} tokens)` : ""}: `;
  return head + (text.length > 100 ? `${text.slice(0, 99)}…` : text);
}

/** The report as the terminal shows it, one string per line. */
export function dryRunText(report: DryRunReport): string[] {
  const lines = [`${DRY_RUN_HEADER}"${report.trainer}" on ${report.model}: nothing was uploaded and no job was created`];
  if (report.tokenizer)
    lines.push(
      `tokens counted with ${report.tokenizer}${report.maxSeqLength !== null ? `; conversations may be up to ${count(report.maxSeqLength)} tokens` : ""}`,
    );
  for (const split of report.splits) {
    lines.push(splitLine(split, report.maxSeqLength));
    for (const error of split.errors) lines.push(`       ${error}`);
    for (const row of split.preview?.rows.slice(0, 3) ?? []) lines.push(`       ${rowLine(row)}`);
  }
  if (report.plan) {
    const { plan } = report;
    lines.push(
      `steps  ${count(plan.steps)} at batch ${plan.batchSize} (${Number(plan.epochs.toFixed(2))} epochs), ${count(plan.paddedTokens)} tokens with padding${plan.evaluations > 0 ? `, ${plan.evaluations} evaluations` : ""}`,
    );
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

/** The report back from `dryRunJsonLines`' output (what `svc start --dry-run --json` printed); null when it did not finish. */
export function readDryRunJsonLines(stdout: string): DryRunReport | null {
  let about: Omit<DryRunReport, "splits" | "plan" | "estimate" | "ok"> | undefined;
  const splits: DryRunSplit[] = [];
  let plan: DryRunPlan | null = null;
  let estimate: DryRunEstimate | undefined;
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    let parsed: { event?: unknown; data?: unknown };
    try {
      parsed = JSON.parse(line) as { event?: unknown; data?: unknown };
    } catch {
      continue; // not one of ours
    }
    const data = parsed.data as never;
    if (parsed.event === "dryRun.started") about = data;
    else if (parsed.event === "dryRun.split") splits.push(data);
    else if (parsed.event === "dryRun.plan") plan = data;
    else if (parsed.event === "dryRun.estimate") estimate = data;
    else if (parsed.event === "dryRun.completed" && about && estimate) return { ...about, splits, plan, estimate, ok: (data as { ok: boolean }).ok };
  }
  return null;
}
