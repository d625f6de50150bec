/**
 * The Endpoints view: one row per deployment (slug; target summary, auth mode and enabled badge
 * as its description) with its keys as children, revoked keys marked. No polling (SPEC: the list
 * has no auto-refresh); it reloads after every command that changes a deployment.
 */
import * as vscode from "vscode";
import type { Deployment, DeploymentKey } from "../../sdk/wire.js";
import { endpointContextValue, endpointDescription, endpointTooltip, keyContextValue, keyDescription, sortKeys } from "../core/endpointRows.js";
import { formatDateTime } from "../../ui-shared/format.js";
import { loadList, problemItem } from "./treeShared.js";
import type { ProjectStatus } from "../projectStatus.js";
import type { StudioAccess } from "../studioAccess.js";

export type EndpointTreeNode =
  | { kind: "endpoint"; deployment: Deployment }
  | { kind: "key"; deploymentId: string; key: DeploymentKey }
  | { kind: "problem"; message: string };

export class EndpointsTree implements vscode.TreeDataProvider<EndpointTreeNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<EndpointTreeNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private deployments: Deployment[] = [];
  private problem: string | undefined;
  private loaded: Promise<void> | undefined;
  private readonly disposables: vscode.Disposable[] = [this.changed];

  constructor(
    private readonly studio: StudioAccess,
    private readonly project: ProjectStatus,
  ) {
    this.disposables.push(project.onDidChange(() => void this.refresh()));
  }

  get current(): readonly Deployment[] {
    return this.deployments;
  }

  /** Reloads deployments (and, through the redraw, their keys). Resolves when loaded. */
  refresh(): Promise<void> {
    const load = (async () => {
      const { items: deployments, problem } = await loadList(
        this.project.canReachCloud,
        async () => (await this.studio.endpoint()).api.listDeployments(),
        this.deployments,
      );
      this.deployments = deployments;
      this.problem = problem;
      this.changed.fire(undefined);
    })();
    this.loaded = load;
    return load;
  }

  /** Keys of one deployment, straight from the studio (tests and the revoke picker use it too). */
  async keysOf(deploymentId: string): Promise<DeploymentKey[]> {
    return sortKeys(await (await this.studio.endpoint()).api.listKeys(deploymentId));
  }

  async getChildren(node?: EndpointTreeNode): Promise<EndpointTreeNode[]> {
    if (node?.kind === "endpoint") {
      try {
        const keys = await this.keysOf(node.deployment.id);
        return keys.map((key) => ({ kind: "key", deploymentId: node.deployment.id, key }));
      } catch (error) {
        return [{ kind: "problem", message: error instanceof Error ? error.message : String(error) }];
      }
    }
    if (node) return [];
    await (this.loaded ?? this.refresh());
    const rows: EndpointTreeNode[] = this.deployments.map((deployment) => ({ kind: "endpoint", deployment }));
    return this.problem ? [{ kind: "problem", message: this.problem }, ...rows] : rows;
  }

  getTreeItem(node: EndpointTreeNode): vscode.TreeItem {
    switch (node.kind) {
      case "endpoint": {
        const { deployment } = node;
        const item = new vscode.TreeItem(deployment.slug, vscode.TreeItemCollapsibleState.Expanded);
        item.id = `endpoint:${deployment.id}`;
        item.description = endpointDescription(deployment);
        item.tooltip = endpointTooltip(deployment);
        item.iconPath = new vscode.ThemeIcon(
          deployment.enabled ? "globe" : "circle-slash",
          deployment.enabled ? new vscode.ThemeColor("charts.green") : new vscode.ThemeColor("disabledForeground"),
        );
        item.contextValue = endpointContextValue(deployment);
        item.command = { command: "svc.openEndpoint", title: "Open Endpoint", arguments: [node] };
        return item;
      }
      case "key": {
        const { key } = node;
        const item = new vscode.TreeItem(key.label, vscode.TreeItemCollapsibleState.None);
        item.id = `key:${key.id}`;
        item.description = keyDescription(key);
        item.tooltip = `${key.label}\nPrefix: ${key.prefix}…\nCreated: ${formatDateTime(key.createdAt)}${key.enabled ? "" : "\nRevoked"}`;
        item.iconPath = new vscode.ThemeIcon(key.enabled ? "key" : "circle-slash", key.enabled ? undefined : new vscode.ThemeColor("disabledForeground"));
        item.contextValue = keyContextValue(key);
        return item;
      }
      case "problem":
        return problemItem("Couldn't load endpoints", node.message);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
