/**
 * One workbench session for the UI suites: the staged extension, a real cloud with a training
 * worker, a quickstart workspace, code-server hosting the extension, and Chromium on the workbench.
 * `dispose()` stops all of it in reverse order; `screenshotIfFailed` keeps what a failed step saw.
 */
import type { Context } from "mocha";
import { startCodeServer, type CodeServer } from "../../support/code-server.js";
import { launchChromium, screenshot, type ChromiumSession } from "../../support/chromium.js";
import type { TempDir } from "../../support/tmp.js";
import { cloudForVsCode, quickstartWorkspace, stageExtension, type StagedExtension, type TrainingShape } from "./fixtures.js";

export const THEMES = { light: "Default Light Modern", dark: "Default Dark Modern" } as const;

export interface WorkbenchSession {
  cloud: Awaited<ReturnType<typeof cloudForVsCode>>;
  workspace: TempDir;
  extension: StagedExtension;
  server: CodeServer;
  browser: ChromiumSession;
  dispose(): Promise<void>;
}

export async function startWorkbenchSession(options: { shape: TrainingShape; theme: keyof typeof THEMES; viewport?: { width: number; height: number } }): Promise<WorkbenchSession> {
  const parts: Partial<WorkbenchSession> = {};
  const dispose = async () => {
    await parts.browser?.close();
    await parts.server?.stop();
    parts.cloud?.restoreEnv();
    await parts.cloud?.dispose();
    await parts.workspace?.remove();
    await parts.extension?.remove();
  };
  try {
    parts.extension = await stageExtension();
    parts.cloud = await cloudForVsCode();
    parts.workspace = await quickstartWorkspace(options.shape);
    parts.server = await startCodeServer({
      workspace: parts.workspace.path,
      extensionDevelopmentPath: parts.extension.path,
      settings: { "svc.cloud.url": parts.cloud.cloudUrl, "svc.studio.port": 0, "workbench.colorTheme": THEMES[options.theme], "remote.autoForwardPorts": false },
    });
    parts.browser = await launchChromium({ viewport: options.viewport ?? { width: 1440, height: 900 } });
    await parts.browser.page.goto(parts.server.url);
    await parts.browser.page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
  } catch (error) {
    await dispose();
    throw error;
  }
  return { ...(parts as Omit<WorkbenchSession, "dispose">), dispose };
}

/** For `afterEach`: what the workbench looked like when a step failed, beside the regular screenshots. */
export async function screenshotIfFailed(context: Context, session: WorkbenchSession | undefined): Promise<void> {
  const test = context.currentTest;
  if (test?.state === "failed" && session) {
    await screenshot(session.browser.page, `vscode-failed-${test.title.replace(/\W+/g, "-").slice(0, 40)}`).catch(() => undefined);
  }
}
