/**
 * The status-bar item of a running job: `svc: step 12/60 · loss 1.2345` while a job runs (a run
 * started here, in the browser studio or in a terminal alike), hidden when nothing runs; clicking
 * it opens the job's panel. The job list is asked every 5 s while the project can reach a cloud;
 * the followed job's events stream in as they happen. What it shows comes from core/trainingStatus.ts.
 */
import * as vscode from "vscode";
import type { Job } from "../sdk/wire.js";
import { activeJob, applyEvents, NO_PROGRESS, statusBarView, type JobProgress } from "./core/trainingStatus.js";
import { streamJobEvents } from "./core/jobEventStream.js";
import { throttle } from "./core/throttle.js";
import type { ProjectStatus } from "./projectStatus.js";
import type { StudioAccess } from "./studioAccess.js";

const POLL_INTERVAL_MS = 5000;
/** The item redraws at most this often while steps stream in. */
const RENDER_INTERVAL_MS = 250;

/** What the item shows, readable by the extension tests (a StatusBarItem does not say whether it is visible). */
export interface TrainingStatusSnapshot {
  visible: boolean;
  jobId?: string;
  text?: string;
  tooltip?: string;
  /** What a click runs. */
  command?: vscode.Command;
}

export class TrainingStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("svc.trainingStatus", vscode.StatusBarAlignment.Left, 10);
  private followed: { job: Job; progress: JobProgress; others: number; stop: AbortController; click: vscode.Command } | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly disposables: vscode.Disposable[] = [this.item];
  private refreshing: Promise<void> | undefined;
  private readonly renderSoon = throttle(() => this.render(), RENDER_INTERVAL_MS);

  constructor(
    private readonly studio: StudioAccess,
    private readonly project: ProjectStatus,
  ) {
    this.item.name = "svc training";
    this.timer = setInterval(() => void this.refresh(), POLL_INTERVAL_MS);
    this.disposables.push(project.onDidChange(() => void this.refresh()));
  }

  get snapshot(): TrainingStatusSnapshot {
    if (!this.followed || this.followed.progress.ended) return { visible: false };
    return {
      visible: true,
      jobId: this.followed.job.id,
      text: this.item.text,
      tooltip: String(this.item.tooltip ?? ""),
      command: this.item.command as vscode.Command,
    };
  }

  /** Asks which job runs now (overlapping calls share one request) and follows it. */
  refresh(): Promise<void> {
    this.refreshing ??= this.load().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async load(): Promise<void> {
    let jobs: Job[] = [];
    if (this.project.canReachCloud) {
      try {
        jobs = await (await this.studio.endpoint()).api.listJobs();
      } catch {
        return; // a flaky moment: keep showing what was shown; the next poll tries again
      }
    }
    const job = activeJob(jobs);
    const others = jobs.filter((j) => j.status === "running" && j.id !== job?.id).length;
    if (!job) return this.unfollow();
    if (this.followed?.job.id === job.id) {
      this.followed = { ...this.followed, job, others };
    } else {
      this.unfollow();
      // One command object per followed job, set once: VS Code re-registers an item's command
      // whenever a new object is assigned and forgets the old one's arguments, so a click that
      // lands while steps stream in (many updates a second) would otherwise run with arguments
      // already dropped, and do nothing. The Job itself, so the panel opens titled with its name.
      const click: vscode.Command = { command: "svc.openJob", title: "Open Job", arguments: [job] };
      this.followed = { job, progress: NO_PROGRESS, others, stop: new AbortController(), click };
      void this.stream(job.id, this.followed.stop.signal);
    }
    this.render();
  }

  /** The followed job's events until it ends; then the list says what runs next. */
  private async stream(jobId: string, signal: AbortSignal): Promise<void> {
    const apply = (events: Parameters<typeof applyEvents>[1]) => {
      if (this.followed?.job.id !== jobId) return;
      this.followed.progress = applyEvents(this.followed.progress, events);
      this.renderSoon();
    };
    try {
      const { url, token } = await this.studio.endpoint();
      await streamJobEvents({ studioUrl: url, token, jobId }, { event: (e) => apply([e]), events: apply, interrupted: () => undefined }, signal);
    } catch {
      // An unknown job or a studio that went away: the next poll decides.
    }
    if (!signal.aborted) void this.refresh();
  }

  private render(): void {
    const followed = this.followed;
    if (!followed || followed.progress.ended) {
      this.item.hide();
      return;
    }
    const view = statusBarView(followed.job, followed.progress, followed.others);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.accessibilityInformation = { label: view.accessibilityLabel, role: "button" };
    if (this.item.command !== followed.click) this.item.command = followed.click;
    this.item.show();
  }

  private unfollow(): void {
    this.followed?.stop.abort();
    this.followed = undefined;
    this.item.hide();
  }

  dispose(): void {
    clearInterval(this.timer);
    this.renderSoon.cancel();
    this.unfollow();
    for (const d of this.disposables) d.dispose();
  }
}
