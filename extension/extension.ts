/**
 * Activation: registers the trees, commands and panel serializers, and returns. Nothing here
 * starts a process, loads the studio or reads the network: the studio starts on first use, and the
 * project status (which may run `svc manifest`) is computed after activation has returned.
 */
import * as vscode from "vscode";
import type { EndpointDetailState } from "../ui-shared/protocol/endpointDetail.js";
import type { JobDetailState } from "../ui-shared/protocol/jobDetail.js";
import type { CompareJobsState } from "../ui-shared/protocol/compareJobs.js";
import type { DatasetsState } from "../ui-shared/protocol/datasets.js";
import type { PlaygroundState } from "../ui-shared/protocol/playground.js";
import { registerCommands } from "./commands/index.js";
import { DetailPanels } from "./panels/detailPanels.js";
import { COMPARE_PANEL, DATASETS_PANEL, ENDPOINT_PANEL, JOB_PANEL, PLAYGROUND_PANEL } from "./panels/kinds.js";
import { vscodePanelHost } from "./panels/panelHost.js";
import { ProjectStatus } from "./projectStatus.js";
import type { Services } from "./services.js";
import { StudioAccess } from "./studioAccess.js";
import { EndpointsTree } from "./trees/endpointsTree.js";
import { JobsTree } from "./trees/jobsTree.js";
import { vscodePrompts } from "./ui/prompts.js";
import { DatasetDiagnostics } from "./datasetDiagnostics.js";
import { TrainingStatusBar } from "./trainingStatusBar.js";

/** What activate() returns: used by the extension tests and the benchmark, not a public API. */
export interface SvcExtensionApi {
  services: Services;
  /** Resolves once the first project status (including the manifest) is known. */
  initialized: Promise<void>;
}

let active: Services | undefined;

export function activate(context: vscode.ExtensionContext): SvcExtensionApi {
  const studio = new StudioAccess(context.extensionPath);
  const project = new ProjectStatus(studio);
  const jobs = new JobsTree(studio, project);
  const endpoints = new EndpointsTree(studio, project);
  const onPanelChange = () => void Promise.all([jobs.refresh(), endpoints.refresh()]);
  const host = vscodePanelHost(() => services);
  const services: Services = {
    studio,
    project,
    jobs,
    endpoints,
    jobPanels: new DetailPanels<JobDetailState>(JOB_PANEL, context.extensionUri, studio, host, onPanelChange),
    endpointPanels: new DetailPanels<EndpointDetailState>(ENDPOINT_PANEL, context.extensionUri, studio, host, onPanelChange),
    comparePanels: new DetailPanels<CompareJobsState>(COMPARE_PANEL, context.extensionUri, studio, host, onPanelChange),
    datasetsPanels: new DetailPanels<DatasetsState>(DATASETS_PANEL, context.extensionUri, studio, host, onPanelChange),
    playgroundPanels: new DetailPanels<PlaygroundState>(PLAYGROUND_PANEL, context.extensionUri, studio, host, onPanelChange),
    output: vscode.window.createOutputChannel("svc"),
    datasets: new DatasetDiagnostics(project),
    trainingStatus: new TrainingStatusBar(studio, project),
    prompts: vscodePrompts(),
  };
  active = services;

  // Several jobs can be selected (Ctrl/Shift-click) for "Compare Jobs" in the context menu.
  const jobsView = vscode.window.createTreeView("svc.jobs", { treeDataProvider: jobs, showCollapseAll: true, canSelectMany: true });
  jobs.attach(jobsView);
  const endpointsView = vscode.window.createTreeView("svc.endpoints", { treeDataProvider: endpoints, showCollapseAll: true });
  context.subscriptions.push(
    studio,
    project,
    jobs,
    endpoints,
    jobsView,
    endpointsView,
    services.jobPanels,
    services.endpointPanels,
    services.comparePanels,
    services.datasetsPanels,
    services.playgroundPanels,
    services.output,
    services.datasets,
    services.trainingStatus,
    vscode.window.registerWebviewPanelSerializer(JOB_PANEL.viewType, services.jobPanels),
    vscode.window.registerWebviewPanelSerializer(ENDPOINT_PANEL.viewType, services.endpointPanels),
    vscode.window.registerWebviewPanelSerializer(COMPARE_PANEL.viewType, services.comparePanels),
    vscode.window.registerWebviewPanelSerializer(DATASETS_PANEL.viewType, services.datasetsPanels),
    vscode.window.registerWebviewPanelSerializer(PLAYGROUND_PANEL.viewType, services.playgroundPanels),
    ...registerCommands(services),
  );

  // After activation returns: the status may start the studio and run `svc manifest`.
  const initialized = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
    await project.refresh();
    await Promise.all([jobs.refresh(), endpoints.refresh()]);
  });
  initialized.catch((error: unknown) => services.output.appendLine(`svc: could not read the project status: ${String(error)}`));
  return { services, initialized };
}

/** Stops the in-process studio (and, through it, a training run in flight, whose job is cancelled). */
export async function deactivate(): Promise<void> {
  const services = active;
  active = undefined;
  await services?.studio.stop();
}
