/**
 * The `extensionTestsPath` module (VS Code's contract: `run()` resolves = pass, rejects = fail):
 * runs every `*.test.cjs` bundle beside it, in name order, inside the real extension host. The
 * same file runs under code-server here and under @vscode/test-electron on a desktop.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { format } from "node:util";
import Mocha from "mocha";

// The workbench forwards console arguments unformatted; one preformatted line per call reads well.
Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(format(...args));

export async function run(): Promise<void> {
  const mocha = new Mocha({ ui: "bdd", color: false, timeout: 60_000, reporter: "spec" });
  const grep = process.env.SVC_EXTENSION_TEST_GREP;
  if (grep) mocha.grep(grep);
  for (const file of readdirSync(__dirname)
    .filter((f) => f.endsWith(".test.cjs"))
    .sort())
    mocha.addFile(path.join(__dirname, file));
  const failures = await new Promise<number>((resolve) => mocha.run(resolve));
  if (failures > 0) throw new Error(`${failures} extension test(s) failed`);
}
