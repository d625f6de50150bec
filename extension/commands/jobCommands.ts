/** Run Training, Open Job, Cancel Job, Delete Job, Compare Jobs. */
import * as vscode from "vscode";
import type { Job } from "../../sdk/wire.js";
import { TransportError } from "../../ui-shared/transport.js";
import { manifestProblem } from "../core/projectState.js";
import { staleBuildText } from "../../sdk/manifest.js";
import { throttle } from "../core/throttle.js";
import { TrainingOutputReader, trainingFailure, type TrainingOutcome } from "../core/trainingOutput.js";
import type { Services } from "../services.js";
import { COMPARE_MAX, COMPARE_MIN, compareSelectionProblem } from "../../ui-shared/compareRuns.js";
import { formatBytes, relativeTime } from "../../ui-shared/format.js";
import { jobFromArg, pickJob } from "./args.js";
import { setupProblem } from "./setup.js";

const REBUILD = "Rebuild and Run";
const RUN_OLD = "Run the Old Build";

/**
 * The bundle is reused as built (SPEC section 4): when `src/svc/` changed since, asks whether to rebuild first, so
 * an edit is never trained around unseen. False: the user dismissed the question, or the rebuild failed (said so).
 */
async function rebuildIfStale(s: Services, api: Awaited<ReturnType<Services["studio"]["endpoint"]>>["api"]): Promise<boolean> {
  const { changed } = await api.getBuildStatus();
  if (changed.length === 0) return true;
  const answer = await s.prompts.warning(staleBuildText(changed), { modal: true }, REBUILD, RUN_OLD);
  if (answer === RUN_OLD) return true;
  if (answer !== REBUILD) return false;
  const manifest = await api.rebuild();
  const problem = manifestProblem(manifest);
  if (problem) {
    void s.prompts.error(problem);
    return false;
  }
  void s.project.refresh();
  return true;
}

/**
 * Runs `svc start` through the studio (`/api/train`), streaming its output into the "svc" Output
 * channel and the progress notification; opens the job's panel as soon as the job exists, so its
 * chart fills while training runs. The datasets' problems are refreshed first (the Problems panel
 * then shows what svc start will refuse). Cancelling the notification is the Overview's Stop
 * (`DELETE /api/train`): svc start cancels its job, or the job it is about to create.
 */
export async function runTraining(s: Services): Promise<TrainingOutcome | undefined> {
  const state = await s.project.refresh({ keepManifest: true });
  const problem = setupProblem(state) ?? (s.project.trainerManifest ? manifestProblem(s.project.trainerManifest) : undefined);
  if (problem) {
    void s.prompts.error(problem);
    return undefined;
  }
  await s.datasets.refresh();
  const { api } = await s.studio.endpoint();
  if (!(await rebuildIfStale(s, api))) return undefined;
  const reader = new TrainingOutputReader();
  let stopped = false;
  s.output.appendLine(`── svc start (${new Date().toLocaleString()}) ──`);
  let openedJob: string | undefined;
  await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: "svc: Training", cancellable: true },
    async (progress, cancellation) => {
      cancellation.onCancellationRequested(() => {
        stopped = true;
        void api.stopTraining().catch((error: unknown) => s.output.appendLine(`stop failed: ${String(error)}`));
      });
      progress.report({ message: "starting svc start…" });
      let lastLine = "";
      const reportLastLine = throttle(() => progress.report({ message: lastLine.slice(0, 120) }), 250);
      await api
        .runTraining((chunk) => {
          s.output.append(chunk);
          const outcome = reader.feed(chunk);
          if (outcome.jobId && !openedJob) {
            openedJob = outcome.jobId;
            const jobId = outcome.jobId;
            s.jobPanels.show({ jobId });
            // The tab says "Job: <id>" until the name is known.
            void api.getJob(jobId).then(
              (job) => s.jobPanels.retitle({ jobId, job }),
              () => undefined,
            );
            void s.jobs.refresh();
            void s.trainingStatus.refresh();
          }
          if (outcome.lastLine) {
            lastLine = outcome.lastLine;
            reportLastLine();
          }
        })
        .catch((error: unknown) => {
          // svc start exiting non-zero (a failed or cancelled job) is told by its own output, read below.
          if (!(error instanceof TransportError && error.code === "run_failed")) throw error;
        })
        .finally(() => reportLastLine.cancel());
    },
  );
  const outcome = reader.outcome();
  void s.jobs.refresh();
  void s.trainingStatus.refresh();
  const failure = trainingFailure(outcome);
  if (stopped) {
    void s.prompts.info(outcome.jobId ? `Training stopped: job ${outcome.jobId} was cancelled.` : "Training stopped before its job was created.", {});
  } else if (failure) {
    void s.prompts.error(failure, "Show Output").then((choice) => choice === "Show Output" && s.output.show(true));
  } else if (outcome.dryRun) {
    void s.prompts
      .info("Dry run finished: nothing was uploaded and no job was created.", {}, "Show Output")
      .then((choice) => choice === "Show Output" && s.output.show(true));
  } else {
    void s.prompts.info(`Training completed (job ${outcome.jobId}).`, {});
  }
  return outcome;
}

export async function openJob(s: Services, arg: unknown): Promise<void> {
  const target = jobFromArg(arg) ?? jobFromArg(await pickJob(s, "Open Job"));
  if (target) s.jobPanels.show({ jobId: target.id, job: target.job });
}

/** Cancels a queued or running job after confirmation. */
export async function cancelJob(s: Services, arg: unknown): Promise<Job | undefined> {
  const target = jobFromArg(arg) ?? jobFromArg(await pickJob(s, "Cancel Job", (job) => job.status === "running" || job.status === "queued"));
  if (!target) return undefined;
  const name = target.job?.name ?? target.id;
  const answer = await s.prompts.warning(`Cancel job “${name}”? Training stops within a second and cannot be resumed.`, { modal: true }, "Cancel Job");
  if (answer !== "Cancel Job") return undefined;
  const { api } = await s.studio.endpoint();
  const job = await api.cancelJob(target.id);
  await s.jobs.refresh();
  return job;
}

/**
 * Deletes an ended job after a modal confirmation: its events, artifacts and the datasets no other
 * job uses. Its panel closes. A queued or running job is refused here, before asking: cancel it
 * first; a job an endpoint serves is refused by the cloud, whose message names the endpoint.
 * Resolves true once deleted.
 */
export async function deleteJob(s: Services, arg: unknown): Promise<boolean> {
  const target = jobFromArg(arg) ?? jobFromArg(await pickJob(s, "Delete Job", (job) => job.status !== "running" && job.status !== "queued"));
  if (!target) return false;
  const { api } = await s.studio.endpoint();
  // Fetched again: the tree's copy may be stale, and only this answer has the disk the job uses.
  const job = await api.getJob(target.id);
  if (job.status === "running" || job.status === "queued") {
    void s.prompts.error(`Job “${job.name}” is ${job.status}: cancel it first (Cancel Job), then delete it.`);
    return false;
  }
  const artifacts = `${job.artifactCount} artifact${job.artifactCount === 1 ? "" : "s"}`;
  const size = job.diskBytes !== undefined ? ` (${formatBytes(job.diskBytes)})` : "";
  const answer = await s.prompts.warning(
    `Delete job “${job.name}”?`,
    { modal: true, detail: `Its events, ${artifacts} and the datasets no other job uses${size} are deleted. This cannot be undone.` },
    "Delete Job",
  );
  if (answer !== "Delete Job") return false;
  await api.deleteJob(job.id);
  s.jobPanels.close(job.id);
  await s.jobs.refresh();
  return true;
}

/**
 * Opens the Compare Jobs panel (the studio's Compare runs view) on 2 to 5 jobs: the jobs selected
 * in the Jobs tree (Ctrl/Shift-click, then "Compare Jobs" in the context menu), a list of ids
 * (tests, other commands), or else the ones picked in a multi-select quick pick.
 */
export async function compareJobs(s: Services, arg: unknown, selection?: unknown): Promise<string[] | undefined> {
  const given = (Array.isArray(selection) && selection.length > 1 ? selection : Array.isArray(arg) ? arg : [])
    .map((item) => jobFromArg(item)?.id)
    .filter((id): id is string => id !== undefined);
  const ids = given.length > 0 ? given : await pickJobsToCompare(s);
  if (!ids) return undefined;
  const problem = compareSelectionProblem(ids);
  if (problem) {
    void s.prompts.error(problem);
    return undefined;
  }
  s.comparePanels.show({ jobIds: ids });
  return ids;
}

async function pickJobsToCompare(s: Services): Promise<string[] | undefined> {
  await s.jobs.refresh();
  const jobs = s.jobs.current;
  if (jobs.length < COMPARE_MIN) {
    void s.prompts.info(`Comparing needs at least ${COMPARE_MIN} jobs; this project has ${jobs.length}.`, {});
    return undefined;
  }
  const picked = await s.prompts.quickPickMany(
    jobs.map((job) => ({ label: job.name, description: `${job.status} · ${relativeTime(job.createdAt)}`, detail: job.id, job })),
    { title: `Compare Jobs: pick ${COMPARE_MIN} to ${COMPARE_MAX}`, matchOnDescription: true, matchOnDetail: true },
  );
  return picked?.map((item) => item.job.id);
}
