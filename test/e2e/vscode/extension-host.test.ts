/**
 * Runs the mocha suites of test/extension inside code-server's real extension host, against a real
 * cloud (its URL reaches the extension through the `svc.cloud.url` setting).
 */
import assert from "node:assert/strict";
import { runExtensionTests } from "../../support/code-server.js";
import type { TempDir } from "../../support/tmp.js";
import { cloudForVsCode, quickstartWorkspace, stageExtension, type StagedExtension } from "./fixtures.js";

describe("VS Code extension tests (inside the extension host)", function () {
  // Two training runs happen in the host (06-job-extras compares two jobs).
  this.timeout(420_000);
  let cloud: Awaited<ReturnType<typeof cloudForVsCode>>;
  let workspace: TempDir;
  let extension: StagedExtension;

  before(async () => {
    extension = await stageExtension();
    cloud = await cloudForVsCode();
    workspace = await quickstartWorkspace({ maxSteps: 24, evalSteps: 6, saveSteps: 12 });
  });

  after(async () => {
    cloud?.restoreEnv();
    await cloud?.dispose();
    await workspace?.remove();
    await extension?.remove();
  });

  it("pass: activation, trees, every command's happy and error path, panels", async () => {
    const lines: string[] = [];
    const code = await runExtensionTests({
      extensionDevelopmentPath: extension.path,
      extensionTestsPath: extension.testsPath,
      workspace: workspace.path,
      settings: { "svc.cloud.url": cloud.cloudUrl, "svc.studio.port": 0 },
      timeoutMs: 360_000,
      screenshotName: "vscode-extension-tests",
      onLog: (_level, message) => {
        lines.push(message);
        // mocha's spec reporter lines, indented by the suite structure; the rest is workbench noise.
        if (/^\s+(✔|✓|\d+\)|[A-Za-z])|passing|failing|pending|Error|at /.test(message) && !message.includes("open-vsx"))
          process.stdout.write(`    │ ${message}\n`);
      },
    });
    assert.equal(code, 0, `extension tests failed:\n${lines.slice(-60).join("\n")}`);
  });
});
