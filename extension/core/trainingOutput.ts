/**
 * Reading `svc start`'s plain-text output as it streams (cli/commands/project.ts prints
 * `job <id> queued: <name>` first and `job <id> <status>` last), so Run Training can open the
 * new job while it trains and tell success from failure when the stream ends.
 */
import type { JobStatus } from "../../sdk/wire.js";
import { isDryRunOutput } from "../../sdk/trainer/dryRunReport.js";

const QUEUED_LINE = /^job (\S+) queued: /m;
const FINAL_LINE = /^job (\S+) (completed|failed|cancelled)\s*$/m;

export interface TrainingOutcome {
  /** Known as soon as the first line arrived. */
  jobId?: string;
  /** Set when `svc start` reported how the job ended. */
  finalStatus?: Extract<JobStatus, "completed" | "failed" | "cancelled">;
  /** The last non-empty line, which carries the CLI's error when it failed before a job existed. */
  lastLine: string;
  /** The output is a dry run's report (`dryRun: true`): no job, and its last line is the verdict. */
  dryRun: boolean;
}

export class TrainingOutputReader {
  private text = "";

  /** Feeds a chunk; returns the outcome so far. */
  feed(chunk: string): TrainingOutcome {
    this.text += chunk;
    return this.outcome();
  }

  outcome(): TrainingOutcome {
    const queued = QUEUED_LINE.exec(this.text);
    const final = FINAL_LINE.exec(this.text);
    const lines = this.text
      .split(/\r?\n/)
      .map((line) => line.trim())
      .filter(Boolean);
    return {
      jobId: queued?.[1] ?? final?.[1],
      finalStatus: final?.[2] as TrainingOutcome["finalStatus"],
      lastLine: lines.at(-1) ?? "",
      dryRun: isDryRunOutput(this.text),
    };
  }
}

/** The message Run Training shows when the stream ended; undefined means success. */
export function trainingFailure(outcome: TrainingOutcome): string | undefined {
  if (outcome.finalStatus === "completed") return undefined;
  // The verdict line of the report: `ok: …` or `not ok: fix the lines above before svc start`.
  if (outcome.dryRun) return outcome.lastLine.startsWith("ok:") ? undefined : `Dry run: ${outcome.lastLine}`;
  if (outcome.finalStatus) return `Training ${outcome.finalStatus}${outcome.lastLine ? `: ${outcome.lastLine}` : ""}`;
  return `svc start failed: ${outcome.lastLine.replace(/^svc: /, "") || "it exited without output"}`;
}
