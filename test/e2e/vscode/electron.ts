/**
 * The same in-host suites as extension-host.test.ts, run under desktop VS Code through
 * @vscode/test-electron (`npm run test:electron`), for machines that can download VS Code.
 * These machines cannot (VSCODE-TESTING.md), so `npm test` runs the suites in code-server instead.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { runTests } from "@vscode/test-electron";
import { cloudForVsCode, quickstartWorkspace, stageExtension } from "./fixtures.js";

const extension = await stageExtension();
const cloud = await cloudForVsCode();
const workspace = await quickstartWorkspace({ maxSteps: 24, evalSteps: 6, saveSteps: 12 });
let code = 1;
try {
  // The settings the code-server run passes: the test cloud's URL and any free studio port.
  const userData = path.join(extension.path, "user-data");
  mkdirSync(path.join(userData, "User"), { recursive: true });
  writeFileSync(
    path.join(userData, "User", "settings.json"),
    JSON.stringify({ "svc.cloud.url": cloud.cloudUrl, "svc.studio.port": 0, "workbench.startupEditor": "none" }),
  );
  code = await runTests({
    extensionDevelopmentPath: extension.path,
    extensionTestsPath: extension.testsPath,
    launchArgs: [workspace.path, "--user-data-dir", userData, "--disable-workspace-trust", "--disable-extensions"],
    extensionTestsEnv: { SVC_HOME: cloud.home },
  });
} catch (error) {
  console.error(`test-electron: ${(error as Error).message}`);
} finally {
  cloud.restoreEnv();
  await cloud.dispose();
  await workspace.remove();
  await extension.remove();
}
process.exit(code);
