/**
 * Benchmark module run inside the extension host (an `extensionTestsPath`, started by
 * test/bench/extension.bench.ts in a workspace with no svc project, so nothing activated the
 * extension yet). Prints one `SVC_BENCH {json}` line:
 * - activation: the svc extension's activate() (module load included) beside an empty
 *   extension's: a module exporting a no-op activate, loaded and called the same way;
 * - first render: command to the Job view's first request (mounted, asking for its job) beside
 *   an empty webview whose only script posts a message.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import * as vscode from "vscode";
import type { SvcExtensionApi } from "../../extension/extension.js";

const RENDER_ROUNDS = 3;

async function emptyExtensionActivation(): Promise<number> {
  const file = path.join(os.tmpdir(), `svc-empty-extension-${process.pid}-${Date.now()}.cjs`);
  writeFileSync(file, "exports.activate = function activate(context) { return {}; };\n");
  const t = performance.now();
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require(file) as { activate(context: unknown): unknown }).activate({ subscriptions: [] });
  return performance.now() - t;
}

async function svcActivation(): Promise<{ ms: number; api: SvcExtensionApi }> {
  const extension = vscode.extensions.getExtension<SvcExtensionApi>("svc.svc-studio")!;
  if (extension.isActive) throw new Error("the bench workspace must not activate svc on startup");
  const t = performance.now();
  const api = await extension.activate();
  return { ms: performance.now() - t, api };
}

/**
 * The smallest webview built the way the svc panels are: strict CSP with a nonce and a script
 * file loaded through asWebviewUri (an inline script is not a fair baseline: the panels load files).
 */
async function emptyWebviewFirstMessage(): Promise<number> {
  const dir = path.join(os.tmpdir(), `svc-empty-webview-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  const script = path.join(dir, "ready.js");
  writeFileSync(script, 'acquireVsCodeApi().postMessage({ kind: "command", method: "webview/ready", params: {} });\n');
  const t = performance.now();
  const panel = vscode.window.createWebviewPanel("svc.benchEmpty", "empty", vscode.ViewColumn.Active, {
    enableScripts: true,
    localResourceRoots: [vscode.Uri.file(dir)],
  });
  const nonce = Math.random().toString(36).slice(2);
  const received = new Promise<void>((resolve) => panel.webview.onDidReceiveMessage(() => resolve()));
  const src = panel.webview.asWebviewUri(vscode.Uri.file(script));
  panel.webview.html = `<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'nonce-${nonce}' ${panel.webview.cspSource}"></head><body><div id="app"></div><script type="module" nonce="${nonce}" src="${src}"></script></body></html>`;
  await received;
  const ms = performance.now() - t;
  panel.dispose();
  return ms;
}

async function jobPanelFirstRender(api: SvcExtensionApi, round: number): Promise<number> {
  const jobId = `bench-${round}-${Date.now()}`;
  const t = performance.now();
  const mounted = new Promise<void>((resolve) => {
    const sub = api.services.jobPanels.onDidReceiveMessage((e) => {
      if (e.id === jobId && e.method === "api/getJob") {
        sub.dispose();
        resolve();
      }
    });
  });
  await vscode.commands.executeCommand("svc.openJob", jobId);
  await mounted;
  const ms = performance.now() - t;
  await vscode.commands.executeCommand("workbench.action.closeAllEditors");
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

export async function run(): Promise<void> {
  const emptyActivation = await emptyExtensionActivation();
  const { ms: activation, api } = await svcActivation();
  const empty: number[] = [];
  const job: number[] = [];
  for (let i = 0; i < RENDER_ROUNDS; i++) {
    empty.push(await emptyWebviewFirstMessage());
    job.push(await jobPanelFirstRender(api, i));
  }
  console.log(`SVC_BENCH ${JSON.stringify({ activation, emptyActivation, jobPanel: median(job), emptyWebview: median(empty), rounds: RENDER_ROUNDS })}`);
}
