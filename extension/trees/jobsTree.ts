/**
 * The Jobs view: jobs grouped by status (SPEC's status filter, as tree groups), each row with its
 * status icon, name and relative time, the id in the tooltip. Polls every 5 s while the view is
 * visible (SPEC section 8) and whenever a command changed something; clicking a job opens it.
 */
import * as vscode from "vscode";
import { loadList, problemItem } from "./treeShared.js";
import type { Job } from "../../sdk/wire.js";
import { groupJobsByStatus, jobContextValue, jobTooltip, statusIcon, type JobGroup } from "../core/jobRows.js";
import { relativeTime } from "../../ui-shared/format.js";
import { shortJobId } from "../../ui-shared/targetSummary.js";
import type { ProjectStatus } from "../projectStatus.js";
import type { StudioAccess } from "../studioAccess.js";

export type JobTreeNode = { kind: "group"; group: JobGroup } | { kind: "job"; job: Job } | { kind: "problem"; message: string };

const POLL_INTERVAL_MS = 5000;

export class JobsTree implements vscode.TreeDataProvider<JobTreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<JobTreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private jobs: Job[] = [];
  private problem: string | undefined;
  private loaded: Promise<void> | undefined;
  private lastSignature = "";
  private poll: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor(
    private readonly studio: StudioAccess,
    private readonly project: ProjectStatus,
  ) {
    this.disposables.push(project.onDidChange(() => void this.refresh()));
  }

  /** Polls only while someone can see the view: a hidden view costs nothing. */
  attach(view: vscode.TreeView<JobTreeNode>): void {
    const update = () => {
      clearInterval(this.poll);
      this.poll = view.visible ? setInterval(() => void this.refresh(), POLL_INTERVAL_MS) : undefined;
      if (view.visible) void this.refresh();
    };
    this.disposables.push(view.onDidChangeVisibility(update), { dispose: () => clearInterval(this.poll) });
    update();
  }

  /** The jobs as last loaded (commands build quick picks from them). */
  get current(): readonly Job[] {
    return this.jobs;
  }

  /** Reloads the list; the tree redraws only when something it shows changed. Resolves when loaded. */
  refresh(): Promise<void> {
    const load = (async () => {
      const { items: jobs, problem } = await loadList(this.project.canReachCloud, async () => (await this.studio.endpoint()).api.listJobs(), this.jobs);
      this.jobs = jobs;
      this.problem = problem;
      const now = Date.now();
      const signature = JSON.stringify([problem, jobs.map((job) => [job.id, job.status, job.name, relativeTime(job.createdAt, now)])]);
      if (signature !== this.lastSignature) {
        this.lastSignature = signature;
        this.changed.fire(undefined);
      }
    })();
    this.loaded = load;
    return load;
  }

  async getChildren(node?: JobTreeNode): Promise<JobTreeNode[]> {
    if (node?.kind === "group") return node.group.jobs.map((job) => ({ kind: "job", job }));
    if (node) return [];
    await (this.loaded ?? this.refresh());
    const groups: JobTreeNode[] = groupJobsByStatus(this.jobs).map((group) => ({ kind: "group", group }));
    // With no jobs and no problem the view stays empty, which is what shows its welcome content.
    return this.problem ? [{ kind: "problem", message: this.problem }, ...groups] : groups;
  }

  getTreeItem(node: JobTreeNode): vscode.TreeItem {
    switch (node.kind) {
      case "group": {
        const item = new vscode.TreeItem(node.group.label, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `group:${node.group.status}`;
        item.description = String(node.group.jobs.length);
        item.contextValue = "svc.jobGroup";
        return item;
      }
      case "job": {
        const { job } = node;
        const item = new vscode.TreeItem(job.name, vscode.TreeItemCollapsibleState.None);
        item.id = `job:${job.id}`;
        const icon = statusIcon(job.status);
        item.iconPath = new vscode.ThemeIcon(icon.id, new vscode.ThemeColor(icon.color));
        // Runs of one trainer share its name: the short id tells the rows apart (issue 31).
        item.description = `${shortJobId(job.id)} · ${relativeTime(job.createdAt)}`;
        item.tooltip = jobTooltip(job);
        item.contextValue = jobContextValue(job);
        item.accessibilityInformation = { label: `${job.name}, ${shortJobId(job.id)}, ${job.status}, ${relativeTime(job.createdAt)}` };
        item.command = { command: "svc.openJob", title: "Open Job", arguments: [node] };
        return item;
      }
      case "problem":
        return problemItem("Couldn't load jobs", node.message);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
