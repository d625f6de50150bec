/**
 * The status-bar item of a running job, without VS Code: which job it follows, what its events say
 * so far, and the text, tooltip and accessible label it shows. extension/trainingStatusBar.ts only
 * turns this into a StatusBarItem and keeps the job's event stream open.
 */
import type { Job } from "../../sdk/wire.js";
import { formatLossValue, isNumber, type JobStreamEvent } from "../../ui-shared/eventLog.js";

/** The job the item follows: the newest running one, else the newest queued one; none when nothing runs. */
export function activeJob(jobs: readonly Job[]): Job | undefined {
  const newest = (status: Job["status"]) =>
    jobs.filter((job) => job.status === status).sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id.localeCompare(a.id))[0];
  return newest("running") ?? newest("queued");
}

/** What a job's events said so far. */
export interface JobProgress {
  step?: number;
  loss?: number;
  evalLoss?: number;
  /** The job ended (completed, failed or cancelled): the item hides. */
  ended: boolean;
}

export const NO_PROGRESS: JobProgress = { ended: false };

/** Folds events into the progress; the latest numeric loss and eval loss win. */
export function applyEvents(progress: JobProgress, events: readonly JobStreamEvent[]): JobProgress {
  let next = progress;
  for (const { type, data } of events) {
    if (type === "training.log") {
      next = {
        ...next,
        ...(isNumber(data.step) ? { step: data.step } : {}),
        ...(isNumber(data.loss) ? { loss: data.loss } : {}),
        ...(isNumber(data.evalLoss) ? { evalLoss: data.evalLoss } : {}),
      };
    } else if (type === "training.completed" || type === "training.failed" || type === "training.cancelled") {
      next = { ...next, ended: true };
    }
  }
  return next;
}

export interface StatusBarView {
  text: string;
  tooltip: string;
  /** For screen readers: no codicon syntax. */
  accessibilityLabel: string;
}

/** The planned steps, from the job's config (maxSteps; epochs have no fixed count up front). */
function totalSteps(job: Job): number | undefined {
  const value = job.config.maxSteps;
  return isNumber(value) ? value : undefined;
}

/** `$(sync~spin) svc: step 12/60 · loss 1.2345`, or `$(clock) svc: queued` before the first step. */
export function statusBarView(job: Job, progress: JobProgress, othersRunning = 0): StatusBarView {
  const total = totalSteps(job);
  const more = othersRunning > 0 ? `\n${othersRunning} more job${othersRunning === 1 ? "" : "s"} running` : "";
  if (job.status === "queued" || progress.step === undefined) {
    const state = job.status === "queued" ? "queued" : "starting";
    return {
      text: `$(${job.status === "queued" ? "clock" : "sync~spin"}) svc: ${state}`,
      tooltip: `${job.name} is ${state}. Click to open the job.${more}`,
      accessibilityLabel: `svc training job ${job.name} ${state}`,
    };
  }
  const step = total !== undefined ? `${progress.step}/${total}` : String(progress.step);
  const loss = progress.loss !== undefined ? ` · loss ${formatLossValue(progress.loss)}` : "";
  const evalLine = progress.evalLoss !== undefined ? `\nEval loss ${formatLossValue(progress.evalLoss)}` : "";
  return {
    text: `$(sync~spin) svc: step ${step}${loss}`,
    tooltip: `${job.name}: step ${step}${progress.loss !== undefined ? `, loss ${formatLossValue(progress.loss)}` : ""}${evalLine}\nClick to open the job.${more}`,
    accessibilityLabel: `svc training job ${job.name}, step ${step}${progress.loss !== undefined ? `, loss ${formatLossValue(progress.loss)}` : ""}`,
  };
}
