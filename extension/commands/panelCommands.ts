/** Preview Datasets and Open Playground: the studio's Datasets and Playground views as VS Code panels. */
import type { Services } from "../services.js";
import { jobFromArg } from "./args.js";
import { setupProblem } from "./setup.js";

/**
 * Opens the Datasets panel, or makes the open one read the files again: the trainer's datasets as
 * `svc start --dry-run --preview` reads them (which needs the CLI and credentials, as a run does).
 */
export function previewDatasets(s: Services): boolean {
  const problem = setupProblem(s.project.state);
  if (problem || !s.project.folder) {
    void s.prompts.error(problem ?? "Open a folder with an svc project first.");
    return false;
  }
  s.datasetsPanels.show({ folder: s.project.folder });
  return true;
}

/**
 * Opens the Playground panel: on a job's adapter when a job is given (its tree item's context menu,
 * a Job panel), else as it is (an open one keeps its conversation) or with the picker's first choice.
 */
export function openPlayground(s: Services, arg: unknown): boolean {
  const problem = setupProblem(s.project.state);
  if (problem) {
    void s.prompts.error(problem);
    return false;
  }
  const job = jobFromArg(arg);
  if (job) s.playgroundPanels.show({ jobId: job.id });
  else if (!s.playgroundPanels.reveal("playground")) s.playgroundPanels.show({});
  return true;
}
