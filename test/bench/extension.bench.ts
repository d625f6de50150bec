/**
 * Extension benchmarks (issue 6), each beside a baseline measured in the same run, in code-server's
 * real extension host: activation time of svc vs an empty extension's, and the Job panel's first
 * render (command to mounted view) vs an empty webview's first message.
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { runExtensionTests } from "../support/code-server.js";
import { createTempDir } from "../support/tmp.js";
import { stageExtension } from "../e2e/vscode/fixtures.js";
import { report } from "./stats.js";

const extension = await stageExtension();
const workspace = await createTempDir("bench-ws"); // no src/svc/index.ts: svc stays inactive until the bench activates it
await mkdir(path.join(workspace.path, "src"), { recursive: true });
let line = "";
try {
  const code = await runExtensionTests({
    extensionDevelopmentPath: extension.path,
    extensionTestsPath: path.join(extension.path, "dist", "extension", "test", "bench.cjs"),
    workspace: workspace.path,
    timeoutMs: 180_000,
    onLog: (_level, message) => {
      if (message.includes("SVC_BENCH ")) line = message.slice(message.indexOf("SVC_BENCH ") + 10);
    },
  });
  if (code !== 0 || !line) throw new Error(`the benchmark module failed (exit ${code})`);
} finally {
  await extension.remove();
  await workspace.remove();
}
const r = JSON.parse(line) as { activation: number; emptyActivation: number; jobPanel: number; emptyWebview: number; rounds: number };
report("extension activation (module load + activate)", r.activation, "ms", "empty extension", r.emptyActivation, false);
report(`job panel first render (median of ${r.rounds})`, r.jobPanel, "ms", "empty webview", r.emptyWebview, false);
