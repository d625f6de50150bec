import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { nodeScriptCommand, spawnNodeCommand } from "../../../sdk/platform/nodeChild.js";
import { stopChild } from "../../../sdk/platform/stop.js";
import { repoRoot } from "../../support/cloud.js";

/**
 * A child that answers stop requests through `onStopRequest` (mode "graceful": prints how it was asked and leaves), or one
 * that ignores them all (mode "deaf"). It prints "ready" once it listens.
 */
const CHILD = (stopModule: string) => `
import { onStopRequest } from ${JSON.stringify(stopModule)};
const keepAlive = setInterval(() => {}, 1000);
if (process.argv[2] === "deaf") {
  process.on("message", () => {});
  process.on("SIGTERM", () => {});
} else {
  const stopListening = onStopRequest((how) => {
    process.stdout.write(\`drained by \${how}\\n\`);
    stopListening();
    clearInterval(keepAlive);
  });
}
process.stdout.write("ready\\n");
`;

describe("platform: the stop protocol (a drain request before a kill, never a signal on Windows)", function () {
  this.timeout(60_000);
  let dir: string;
  let script: string;
  const children: ChildProcess[] = [];
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "svc-stop-"));
    script = path.join(dir, "child.ts");
    writeFileSync(script, CHILD(pathToFileURL(path.join(repoRoot, "sdk", "platform", "stop.ts")).href));
  });
  after(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  /** Starts the child (with or without an IPC channel) and resolves once it listens, with all it printed. */
  async function start(mode: "graceful" | "deaf", ipc: boolean): Promise<{ child: ChildProcess; output: () => string }> {
    const child = spawnNodeCommand(nodeScriptCommand(script, process.execPath), [mode], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "inherit", ...(ipc ? ["ipc" as const] : [])],
    });
    children.push(child);
    let output = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout!.setEncoding("utf8").on("data", (text: string) => {
        output += text;
        if (output.includes("ready")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`child exited (${code}) before it was ready: ${output}`)));
    });
    return { child, output: () => output };
  }

  it("asks over IPC, and the child finishes on its own (on Windows too)", async () => {
    for (const platform of ["win32", "linux", "darwin"] as const) {
      const { child, output } = await start("graceful", true);
      assert.equal(await stopChild(child, { graceMs: 20_000, platform }), "drained", platform);
      assert.equal(child.exitCode, 0, platform);
      assert.match(output(), /drained by drain/, platform);
    }
  });

  it("kills a child that does not finish within the grace period", async () => {
    const { child } = await start("deaf", true);
    assert.equal(await stopChild(child, { graceMs: 300, platform: "linux" }), "killed");
    assert.equal(child.signalCode, "SIGKILL");
  });

  it("without an IPC channel: SIGTERM on POSIX; on Windows no signal, where it would be a hard kill anyway", async () => {
    const posix = await start("graceful", false);
    assert.equal(await stopChild(posix.child, { graceMs: 20_000, platform: "darwin" }), "drained");
    assert.match(posix.output(), /drained by SIGTERM/);

    const windows = await start("graceful", false);
    assert.equal(await stopChild(windows.child, { graceMs: 20_000, platform: "win32" }), "killed");
    assert.doesNotMatch(windows.output(), /drained/, "no SIGTERM was sent, so the handler never ran");
  });

  it("a child that already ended is left alone", async () => {
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    assert.equal(await stopChild(child, { graceMs: 10, platform: "win32" }), "drained");
  });
});
