/**
 * Job detail and Endpoint detail panels (STYLE.md 5 and 6): the built Svelte bundles in a webview
 * with a strict CSP, resources only from `dist/webview`, one panel per job or endpoint (showing
 * it again re-focuses the open one), and a serializer so open panels come back after a reload.
 * The protocol itself lives in core/panelConnection.ts; this file only wires it to VS Code.
 */
import * as vscode from "vscode";
import { PanelConnection } from "../core/panelConnection.js";
import { panelRequestHandlers, panelStreamRunner, type PanelChange, type PanelHost } from "../core/panelApi.js";
import { panelHtml } from "../core/webviewHtml.js";
import type { StudioAccess } from "../studioAccess.js";

export interface PanelKind<S> {
  /** Also the serializer's id (package.json `onWebviewPanel:` activation). */
  viewType: string;
  /** `dist/webview/<bundle>.js` and `.css`. */
  bundle: string;
  /** Host -> view notification carrying S (`jobDetail/state/didChange`, ...). */
  stateMethod: string;
  /** The job or deployment id: one panel per id. */
  idOf(state: S): string;
  title(state: S): string;
  /** `media/<icon>-light.svg` and `-dark.svg` (panel tabs take image files, not codicons). */
  icon: string;
}

interface OpenPanel<S> {
  panel: vscode.WebviewPanel;
  connection: PanelConnection;
  state: S;
}

/** What tests and the benchmark observe: every message a view sent, with its panel id. */
export interface PanelMessageEvent {
  viewType: string;
  id: string;
  method: string;
}

export class DetailPanels<S> implements vscode.WebviewPanelSerializer<S>, vscode.Disposable {
  private readonly open = new Map<string, OpenPanel<S>>();
  private readonly messages = new vscode.EventEmitter<PanelMessageEvent>();
  readonly onDidReceiveMessage = this.messages.event;

  constructor(
    private readonly kind: PanelKind<S>,
    private readonly extensionUri: vscode.Uri,
    private readonly studio: StudioAccess,
    /** Clipboard, save dialog, the browser studio and other panels, for this kind's views. */
    private readonly host: PanelHost,
    /** A panel changed a job or deployment itself: the trees reload. */
    private readonly onPanelChange: (change: PanelChange) => void,
  ) {}

  /** Shows the panel for this id, creating it or re-focusing (and updating) the open one. */
  show(state: S, column: vscode.ViewColumn = vscode.ViewColumn.Active): vscode.WebviewPanel {
    const id = this.kind.idOf(state);
    const existing = this.open.get(id);
    if (existing) {
      existing.state = state;
      existing.panel.title = this.kind.title(state);
      existing.connection.notify(this.kind.stateMethod, state);
      existing.panel.reveal(existing.panel.viewColumn ?? column);
      return existing.panel;
    }
    const panel = vscode.window.createWebviewPanel(this.kind.viewType, this.kind.title(state), column, this.webviewOptions());
    this.attach(panel, state);
    return panel;
  }

  /** Called by VS Code after a reload for every panel of this kind that was open, with the state the view saved. */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel, state: S | undefined): Promise<void> {
    if (!state || !this.kind.idOf(state)) {
      panel.dispose(); // Nothing to show: a panel from an older version, or one that never loaded.
      return;
    }
    panel.webview.options = this.webviewOptions();
    this.attach(panel, state);
  }

  /** Brings the open panel for `id` to the front as it is; false when none is open. */
  reveal(id: string): boolean {
    const entry = this.open.get(id);
    entry?.panel.reveal(entry.panel.viewColumn);
    return entry !== undefined;
  }

  /** Tells the open panel for `id`, if any, something changed elsewhere. */
  notify(id: string, method: string, params: unknown): void {
    this.open.get(id)?.connection.notify(method, params);
  }

  /**
   * Sends the open panel its state again, which remounts the view with fresh data. Used for key
   * changes: the Endpoint view's `deployment/didChange` reload re-reads the deployment only, not
   * its key list.
   */
  remount(id: string): void {
    const entry = this.open.get(id);
    entry?.connection.notify(this.kind.stateMethod, entry.state);
  }

  /** Updates the tab title once more is known (a job opened by id gets its name). */
  retitle(state: S): void {
    const entry = this.open.get(this.kind.idOf(state));
    if (!entry) return;
    entry.state = state;
    entry.panel.title = this.kind.title(state);
  }

  /** Closes the panel of `id` if one is open (its subject was deleted). */
  close(id: string): void {
    this.open.get(id)?.panel.dispose();
  }

  isOpen(id: string): boolean {
    return this.open.has(id);
  }

  get openIds(): string[] {
    return [...this.open.keys()];
  }

  private webviewOptions(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      // Only the built bundles: nothing else on disk is reachable from the page.
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, "dist", "webview")],
      // The job view holds a live chart and event log; rebuilding them on every tab switch
      // would replay the whole stream.
      retainContextWhenHidden: true,
    };
  }

  private attach(panel: vscode.WebviewPanel, initial: S): void {
    const id = this.kind.idOf(initial);
    const studio = () => this.studio.endpoint();
    const connection = new PanelConnection({
      post: (message) => panel.webview.postMessage(message),
      handlers: panelRequestHandlers(studio, this.host, this.onPanelChange),
      runStream: panelStreamRunner(studio),
      onReady: () => connection.notify(this.kind.stateMethod, entry.state),
    });
    const entry: OpenPanel<S> = { panel, connection, state: initial };
    this.open.set(id, entry);
    const media = (variant: string) => vscode.Uri.joinPath(this.extensionUri, "media", `${this.kind.icon}-${variant}.svg`);
    panel.iconPath = { light: media("light"), dark: media("dark") };
    panel.webview.html = this.html(panel.webview, this.kind.title(initial));
    const subscriptions = [
      panel.webview.onDidReceiveMessage((message: unknown) => {
        connection.receive(message);
        const method = (message as { method?: unknown } | null)?.method;
        if (typeof method === "string") this.messages.fire({ viewType: this.kind.viewType, id, method });
      }),
    ];
    panel.onDidDispose(() => {
      connection.dispose();
      for (const s of subscriptions) s.dispose();
      if (this.open.get(id)?.panel === panel) this.open.delete(id);
    });
  }

  private html(webview: vscode.Webview, title: string): string {
    const asset = (file: string) => webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, "dist", "webview", file)).toString();
    return panelHtml({
      cspSource: webview.cspSource,
      script: asset(`${this.kind.bundle}.js`),
      style: asset(`${this.kind.bundle}.css`),
      codicons: asset("codicon.css"),
      title,
    });
  }

  dispose(): void {
    for (const { panel } of [...this.open.values()]) panel.dispose();
    this.messages.dispose();
  }
}
