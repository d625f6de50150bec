/** Everything the commands work with, created once in activate(). */
import type * as vscode from "vscode";
import type { EndpointDetailState } from "../ui-shared/protocol/endpointDetail.js";
import type { JobDetailState } from "../ui-shared/protocol/jobDetail.js";
import type { CompareJobsState } from "../ui-shared/protocol/compareJobs.js";
import type { DatasetsState } from "../ui-shared/protocol/datasets.js";
import type { PlaygroundState } from "../ui-shared/protocol/playground.js";
import type { DetailPanels } from "./panels/detailPanels.js";
import type { ProjectStatus } from "./projectStatus.js";
import type { StudioAccess } from "./studioAccess.js";
import type { EndpointsTree } from "./trees/endpointsTree.js";
import type { JobsTree } from "./trees/jobsTree.js";
import type { Prompts } from "./ui/prompts.js";
import type { DatasetDiagnostics } from "./datasetDiagnostics.js";
import type { TrainingStatusBar } from "./trainingStatusBar.js";

export interface Services {
  studio: StudioAccess;
  project: ProjectStatus;
  jobs: JobsTree;
  endpoints: EndpointsTree;
  jobPanels: DetailPanels<JobDetailState>;
  endpointPanels: DetailPanels<EndpointDetailState>;
  /** The one Compare Jobs panel. */
  comparePanels: DetailPanels<CompareJobsState>;
  /** The one Datasets panel: the train and eval JSONL as a dry run reads them. */
  datasetsPanels: DetailPanels<DatasetsState>;
  /** The one Playground panel. */
  playgroundPanels: DetailPanels<PlaygroundState>;
  /** "svc": `svc start` output and the extension's own notes. Never receives a key's plaintext. */
  output: vscode.OutputChannel;
  /** Invalid dataset lines in the Problems panel. */
  datasets: DatasetDiagnostics;
  /** The running job's step and loss in the status bar. */
  trainingStatus: TrainingStatusBar;
  /** Replaced member by member in extension tests (see ui/prompts.ts). */
  prompts: Prompts;
}
