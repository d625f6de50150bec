/**
 * What every workbench end-to-end suite starts and stops: the staged extension, a cloud with a
 * training worker, a quickstart workspace of the given training shape, code-server and Chromium
 * on the loaded workbench (dark theme first). `failureScreenshot` keeps what a failed step looked like.
 */
import { startCodeServer, type CodeServer } from "../../support/code-server.js";
import { launchChromium, screenshot, type ChromiumSession } from "../../support/chromium.js";
import type { TempDir } from "../../support/tmp.js";
import { cloudForVsCode, quickstartWorkspace, stageExtension, type StagedExtension, type TrainingShape } from "./fixtures.js";

export const THEMES = { light: "Default Light Modern", dark: "Default Dark Modern" } as const;

export interface WorkbenchSession {
  browser: ChromiumSession;
  server: CodeServer;
  workspace: TempDir;
  cloud: Awaited<ReturnType<typeof cloudForVsCode>>;
  /** Takes `vscode-failed-<title>.png` when the test failed; call from afterEach. */
  failureScreenshot(test: Mocha.Test | undefined): Promise<void>;
  stop(): Promise<void>;
}

export async function startWorkbench(shape: TrainingShape): Promise<WorkbenchSession> {
  const extension: StagedExtension = await stageExtension();
  const cloud = await cloudForVsCode();
  const workspace = await quickstartWorkspace(shape);
  const server = await startCodeServer({
    workspace: workspace.path,
    extensionDevelopmentPath: extension.path,
    settings: { "svc.cloud.url": cloud.cloudUrl, "svc.studio.port": 0, "workbench.colorTheme": THEMES.dark, "remote.autoForwardPorts": false },
  });
  const browser = await launchChromium({ viewport: { width: 1440, height: 900 } });
  await browser.context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.baseUrl });
  await browser.page.goto(server.url);
  await browser.page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
  return {
    browser,
    server,
    workspace,
    cloud,
    async failureScreenshot(test) {
      if (test?.state !== "failed") return;
      await screenshot(browser.page, `vscode-failed-${test.title.replace(/\W+/g, "-").slice(0, 40)}`).catch(() => undefined);
    },
    async stop() {
      await browser.close();
      await server.stop();
      cloud.restoreEnv();
      await cloud.dispose();
      await workspace.remove();
      await extension.remove();
    },
  };
}
