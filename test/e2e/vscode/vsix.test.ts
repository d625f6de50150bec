/**
 * The packaged VSIX: small, holding only the bundles, webviews and icons; installed into a clean
 * code-server it opens the quickstart workspace, where svc-studio is installed from its npm tarball
 * (no links), finds that workspace's CLI, and Run Training works end to end.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import path from "node:path";
import { launchChromium, screenshot, type ChromiumSession } from "../../support/chromium.js";
import { createTempDir, type TempDir } from "../../support/tmp.js";
import { cloudForVsCode, installedQuickstartWorkspace, REPO_ROOT, stageExtension, type StagedExtension } from "./fixtures.js";
import { startWithInstalledVsix, type InstalledCodeServer } from "./installedCodeServer.js";
import { openSvcContainer, runCommand, visibleWebview } from "./workbench.js";

describe("packaged VSIX", function () {
  this.timeout(480_000);
  let staged: StagedExtension;
  let out: TempDir;
  let vsix: { vsix: string; bytes: number };
  let cloud: Awaited<ReturnType<typeof cloudForVsCode>>;
  let workspace: TempDir;
  let server: InstalledCodeServer | undefined;
  let browser: ChromiumSession | undefined;

  before(async () => {
    staged = await stageExtension();
    out = await createTempDir("vsix");
    const { packageVsix } = (await import(path.join(REPO_ROOT, "scripts", "package-vsix.mjs"))) as {
      packageVsix(options: { dir: string; out: string; build: boolean }): Promise<{ vsix: string; bytes: number }>;
    };
    vsix = await packageVsix({ dir: staged.path, out: path.join(out.path, "svc.vsix"), build: false });
    cloud = await cloudForVsCode();
    workspace = await installedQuickstartWorkspace({ maxSteps: 6, evalSteps: 3, saveSteps: 6 });
  });

  after(async () => {
    await browser?.close();
    await server?.stop();
    cloud?.restoreEnv();
    await cloud?.dispose();
    await workspace?.remove();
    await out?.remove();
    await staged?.remove();
  });

  it("holds only the extension, the studio bundle, the webviews and icons, in a few MB", () => {
    const listing = execFileSync("unzip", ["-Z1", vsix.vsix], { encoding: "utf8" }).trim().split("\n");
    const files = listing.filter((f) => f.startsWith("extension/")).map((f) => f.slice("extension/".length));
    console.log(`      VSIX: ${(vsix.bytes / 1024).toFixed(0)} KiB, ${files.length} files`);
    assert.ok(vsix.bytes < 5 * 1024 * 1024);
    assert.ok(files.includes("dist/extension/extension.cjs") && files.includes("dist/extension/studio.cjs"));
    assert.ok(files.includes("dist/webview/jobDetail.js") && files.includes("dist/webview/endpointDetail.js") && files.includes("dist/webview/compareJobs.js"));
    assert.ok(files.includes("dist/webview/datasets.js") && files.includes("dist/webview/playground.js") && files.includes("media/datasets-dark.svg"));
    const unexpected = files.filter(
      (f) => !/^(package\.json|readme\.md|changelog\.md|license(\.txt)?|media\/.+|dist\/extension\/(extension|studio)\.cjs|dist\/webview\/[^/]+)$/i.test(f),
    );
    assert.deepEqual(unexpected, []);
    assert.ok(!files.some((f) => f.endsWith(".map") || f.endsWith(".node") || f.includes("node_modules") || f.endsWith(".ts")));
  });

  it("installs into a clean code-server and its Run Training trains the quickstart", async () => {
    server = await startWithInstalledVsix({ vsix: vsix.vsix, workspace: workspace.path, settings: { "svc.cloud.url": cloud.cloudUrl, "svc.studio.port": 0 } });
    assert.ok(
      server.installed.some((name) => name.startsWith("svc.svc-studio-")),
      `installed: ${server.installed.join(", ")}`,
    );
    browser = await launchChromium({ viewport: { width: 1440, height: 900 } });
    const page = browser.page;
    await page.goto(server.url);
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
    await openSvcContainer(page);
    await page.getByRole("button", { name: "Continue Anonymously" }).click({ timeout: 30_000 });
    await page.getByRole("button", { name: "Run Training" }).first().waitFor({ state: "visible", timeout: 60_000 });
    await runCommand(page, "svc: Run Training");
    await visibleWebview(page).locator('[data-testid="job-status"] [data-status="completed"]').waitFor({ state: "visible", timeout: 120_000 });
    await page.locator(".monaco-list-row", { hasText: "quickstart-json-answers" }).first().waitFor({ state: "visible" });
    await screenshot(page, "vscode-vsix-installed-training");
  });
});
